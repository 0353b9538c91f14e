"""What every adapter shares: the resolved scenario, the data generator of docs/semantics.md §1, the process group,
the NS-call counter and the trace writer."""
