-- Scheduled referral codes: a code that takes over from a partner's current one at a future
-- moment, on every instance, to the second. Instances carry the schedule in their snapshot and
-- switch on their own clock (PostgreSQL may be unreachable at that moment); the first instance
-- that sees a due entry also writes it through to refgate_partners with
-- refgate_apply_due_codes(), so the history shows the code live from valid_from exactly.

CREATE TABLE refgate_code_schedule (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    partner_id bigint NOT NULL REFERENCES refgate_partners (id) ON DELETE CASCADE,
    ref_code   text NOT NULL CHECK (length(ref_code) BETWEEN 1 AND 128),
    valid_from timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    created_by text NOT NULL,
    UNIQUE (partner_id, valid_from)
);

CREATE TRIGGER refgate_code_schedule_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON refgate_code_schedule
    FOR EACH STATEMENT EXECUTE FUNCTION refgate_snapshot_changed();

-- The history trigger takes the moment of the change from refgate.code_at when a scheduled code
-- is applied, and from now() otherwise.
CREATE OR REPLACE FUNCTION refgate_partner_code_history() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    at timestamptz := coalesce(nullif(current_setting('refgate.code_at', true), '')::timestamptz,
                               now());
BEGIN
    IF TG_OP = 'UPDATE' THEN
        IF NEW.ref_code = OLD.ref_code AND NEW.ref_param = OLD.ref_param THEN
            RETURN NULL;
        END IF;
        UPDATE refgate_partner_codes SET live_until = at
        WHERE partner_id = NEW.id AND live_until IS NULL;
    END IF;
    INSERT INTO refgate_partner_codes (partner_id, ref_param, ref_code, live_from)
    VALUES (NEW.id, NEW.ref_param, NEW.ref_code, at);
    RETURN NULL;
END;
$$;

-- Writes every due scheduled code through to its partner, oldest first, and returns how many.
-- Safe to run from many instances at once: each entry is taken by one of them.
CREATE FUNCTION refgate_apply_due_codes() RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    due record;
    old_code text;
    applied integer := 0;
BEGIN
    FOR due IN
        SELECT s.id, s.partner_id, s.ref_code, s.valid_from, s.created_by, p.slug
        FROM refgate_code_schedule s JOIN refgate_partners p ON p.id = s.partner_id
        WHERE s.valid_from <= now()
        ORDER BY s.valid_from, s.id
        FOR UPDATE OF s SKIP LOCKED
    LOOP
        DELETE FROM refgate_code_schedule WHERE id = due.id;
        SELECT ref_code INTO old_code FROM refgate_partners WHERE id = due.partner_id FOR UPDATE;
        PERFORM set_config('refgate.code_at', due.valid_from::text, true);
        UPDATE refgate_partners
        SET ref_code = due.ref_code, updated_at = now(), version = version + 1
        WHERE id = due.partner_id AND ref_code IS DISTINCT FROM due.ref_code;
        PERFORM set_config('refgate.code_at', '', true);
        INSERT INTO refgate_audit (actor, entity, slug, action, before, after)
        VALUES ('schedule', 'partner', due.slug, 'update',
                jsonb_build_object('ref_code', old_code),
                jsonb_build_object('ref_code', due.ref_code, 'valid_from', due.valid_from,
                                   'scheduled_by', due.created_by));
        applied := applied + 1;
    END LOOP;
    RETURN applied;
END;
$$;
