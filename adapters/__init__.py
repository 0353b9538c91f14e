"""muoncheck's adapters: run muoncheck scenarios through real Muon implementations and write traces
for `muoncheck verify`. `common/` is shared by every adapter; `torch/` drives torch.optim.Muon;
`deepspeed/` (scripts, run from the checkout) drives DeepSpeed's Muon."""
