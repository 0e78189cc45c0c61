-- A node's address decides where the inference gateway sends a tenant's traffic and which host a
-- pod's SSH command names, so changing it is an event operators hear of (issue 27): only the node's
-- own agent (a key bound to it) or an operator may change it, every change is audited, and each
-- one raises a warning alert, resolved once an operator has acknowledged it. The alert type is added
-- to alert_events' type lists in place (as 20261130200200 did), so types other branches add stay.
DO $$
DECLARE
    c RECORD;
BEGIN
    FOR c IN SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint
              WHERE conrelid = '"alert_events"'::regclass AND conname IN ('alert_events_type_check', 'alert_events_rule_check')
    LOOP
        IF position('''node_address_changed''' IN c.def) = 0 THEN
            EXECUTE format('ALTER TABLE "alert_events" DROP CONSTRAINT %I, ADD CONSTRAINT %I %s', c.conname, c.conname,
                           replace(c.def, 'ARRAY[', 'ARRAY[''node_address_changed''::text, '));
        END IF;
    END LOOP;
END $$;
