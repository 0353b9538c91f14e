"""torch.optim.Muon (Muon-tagged params) with torch.optim.AdamW (the rest) under DDP (stage 0) or
FSDP2 `fully_shard` (stages 2 and 3), one process per rank. `python -m adapters.torch.run --help`."""
