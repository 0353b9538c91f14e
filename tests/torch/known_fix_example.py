"""A user's fix for a known defect of their optimizer factory (the registry
known_defects_no_nesterov.json names it): the factory that drops Nesterov, replaced by the one
that keeps the scenario's setting. Used by test_known_defects.py."""
from adapters.torch import optimizers


def nesterov_restored(_original):
    def factory(muon_groups, adam_groups, s):
        return optimizers.torch_muon(muon_groups, adam_groups, s)
    return factory
