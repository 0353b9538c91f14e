"""What every adapter shares: the resolved scenario, the SPEC data generator, the process group,
the NS-call counter and the trace writer."""
