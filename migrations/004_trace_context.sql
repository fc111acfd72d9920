-- Geneva 004: the trace context of the request that created a workflow.
--
-- trace_context holds a W3C traceparent header value
-- (version-traceid-parentid-flags, e.g.
-- 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01), written once by
-- geneva.create_workflow from its p_trace_context and returned to the worker
-- with every step by geneva.start_step, so that each step's span links to
-- the trace that created the workflow, however much later it runs. NULL when
-- the creator passed none.

alter table geneva.workflows add column trace_context text;
