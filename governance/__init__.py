"""Governance: the services every front calls — retain (judge, record, deliver, settle), the guarded
config change and its verification, review, archive and restore, plans, reports, retention, the
mission seeder, recovery at start. Typed inputs and outputs,
no ASGI: a service raises :class:`memwarden.governance.errors.Refused` for an operation it cannot
do, and the front decides how to answer it.
"""
