-- Two branches extended alert_events' type lists at once: reservations (in place) and operations
-- (which restated the lists without reservation_degraded). Put the reservation type back, in
-- place, so every type either branch added is allowed.
DO $$
DECLARE
    c RECORD;
BEGIN
    FOR c IN SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint
              WHERE conrelid = '"alert_events"'::regclass AND conname IN ('alert_events_type_check', 'alert_events_rule_check')
    LOOP
        IF position('''reservation_degraded''' IN c.def) = 0 THEN
            EXECUTE format('ALTER TABLE "alert_events" DROP CONSTRAINT %I, ADD CONSTRAINT %I %s', c.conname, c.conname, replace(c.def, 'ARRAY[', 'ARRAY[''reservation_degraded''::text, '));
        END IF;
    END LOOP;
END $$;
