-- Issue 28: a provisioning that failed (the BMC unreachable, the credentials refused, the image
-- refused, the agent never came back) is an alert of its own about the node. The type lists of
-- alert_events are extended in place, so the types other migrations add stay whole whatever order
-- the branches' migrations run in.
DO $$
DECLARE
    c RECORD;
BEGIN
    FOR c IN SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint
              WHERE conrelid = '"alert_events"'::regclass AND conname IN ('alert_events_type_check', 'alert_events_rule_check')
    LOOP
        IF position('''provisioning_failed''' IN c.def) = 0 THEN
            EXECUTE format('ALTER TABLE "alert_events" DROP CONSTRAINT %I, ADD CONSTRAINT %I %s', c.conname, c.conname,
                           replace(c.def, 'ARRAY[', 'ARRAY[''provisioning_failed''::text, '));
        END IF;
    END LOOP;
END $$;
