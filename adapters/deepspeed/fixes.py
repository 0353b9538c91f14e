"""DeepSpeed's known defects and their fixes, by id: `FIXES = {id: Fix(id, summary, apply)}`
(adapters/plugin.py). A request's `fixes` (`muoncheck sweep|verify --impl deepspeed --fix ID`)
applies each before the case; `apply()` makes the runtime replacement and returns the callable
that reverts it, run after the case whatever it did. Empty until a defect is attributed."""
FIXES = {}
