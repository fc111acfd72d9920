-- Define py_invoice and create one. Run it with the definition's JSON as the
-- psql variable "definition", as an operator (or the schema's owner):
--   psql "$DATABASE_URL" -X -v definition="$(cat examples/http/python/py_invoice.json)" \
--     -f examples/http/python/run.sql
\set ON_ERROR_STOP on

-- 1. Every step is HTTP, so an operator may define it. A changed definition
--    becomes the next version (geneva.definition_versions lists them).
select geneva.define_workflow('py_invoice', :'definition');

-- 2. A workflow for invoice 1001: its first step is due now, on the
--    geneva_http queue, where `geneva worker` takes it.
select geneva.create_workflow('py_invoice', 'Invoice', '1001') as workflow_id \gset
\echo workflow :workflow_id
