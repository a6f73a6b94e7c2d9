"""The admin API's body models agree with the services that act on them."""

from __future__ import annotations

from typing import get_args

from memwarden.fronts.admin.bodies import PlanOperation
from memwarden.governance.plans import OPS


def test_a_plan_body_takes_exactly_the_operations_a_plan_can_run() -> None:
    # The model (and the OpenAPI enum written from it) and the service's table are two spellings of
    # one list: an operation added to one alone would be refused, or documented but not run.
    assert set(get_args(PlanOperation.model_fields["op"].annotation)) == set(OPS)
