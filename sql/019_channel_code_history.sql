-- Placements (issue 42): the code history covers a partner's per-channel codes. Each history row
-- keeps the channel_codes live with its code, and a change of channel_codes alone starts a new
-- row, as a change of ref_code does, so that "which code did the newsletter carry on that day"
-- has an answer. Rows from before this migration get the partner's current list when they are
-- live, '[]' otherwise (nothing older was kept).
ALTER TABLE refgate_partner_codes
    ADD COLUMN channel_codes jsonb NOT NULL DEFAULT '[]'
        CHECK (jsonb_typeof(channel_codes) = 'array');

UPDATE refgate_partner_codes h SET channel_codes = p.channel_codes
FROM refgate_partners p
WHERE h.partner_id = p.id AND h.live_until IS NULL;

CREATE OR REPLACE FUNCTION refgate_partner_code_history() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    at timestamptz := coalesce(nullif(current_setting('refgate.code_at', true), '')::timestamptz,
                               now());
BEGIN
    IF TG_OP = 'UPDATE' THEN
        IF NEW.ref_code = OLD.ref_code AND NEW.ref_param = OLD.ref_param
           AND NEW.channel_codes = OLD.channel_codes THEN
            RETURN NULL;
        END IF;
        UPDATE refgate_partner_codes SET live_until = at
        WHERE partner_id = NEW.id AND live_until IS NULL;
    END IF;
    INSERT INTO refgate_partner_codes (partner_id, ref_param, ref_code, channel_codes, live_from)
    VALUES (NEW.id, NEW.ref_param, NEW.ref_code, NEW.channel_codes, at);
    RETURN NULL;
END;
$$;

DROP TRIGGER refgate_partner_code_history ON refgate_partners;
CREATE TRIGGER refgate_partner_code_history
    AFTER INSERT OR UPDATE OF ref_code, ref_param, channel_codes ON refgate_partners
    FOR EACH ROW EXECUTE FUNCTION refgate_partner_code_history();

-- Scheduled switches cover channel_codes too: an entry sets the code, the list, or both at
-- valid_from (ref_code NULL: the code stays; channel_codes NULL: the list stays).
ALTER TABLE refgate_code_schedule
    ALTER COLUMN ref_code DROP NOT NULL,
    ADD COLUMN channel_codes jsonb CHECK (jsonb_typeof(channel_codes) = 'array'),
    ADD CHECK (ref_code IS NOT NULL OR channel_codes IS NOT NULL);

CREATE OR REPLACE FUNCTION refgate_apply_due_codes() RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    due record;
    old record;
    applied integer := 0;
BEGIN
    FOR due IN
        SELECT s.id, s.partner_id, s.ref_code, s.channel_codes, s.valid_from, s.created_by, p.slug
        FROM refgate_code_schedule s JOIN refgate_partners p ON p.id = s.partner_id
        WHERE s.valid_from <= now()
        ORDER BY s.valid_from, s.id
        FOR UPDATE OF s SKIP LOCKED
    LOOP
        DELETE FROM refgate_code_schedule WHERE id = due.id;
        SELECT ref_code, channel_codes INTO old FROM refgate_partners
        WHERE id = due.partner_id FOR UPDATE;
        PERFORM set_config('refgate.code_at', due.valid_from::text, true);
        UPDATE refgate_partners
        SET ref_code = coalesce(due.ref_code, ref_code),
            channel_codes = coalesce(due.channel_codes, channel_codes),
            updated_at = now(), version = version + 1
        WHERE id = due.partner_id
          AND (ref_code IS DISTINCT FROM coalesce(due.ref_code, ref_code)
               OR channel_codes IS DISTINCT FROM coalesce(due.channel_codes, channel_codes));
        PERFORM set_config('refgate.code_at', '', true);
        INSERT INTO refgate_audit (actor, entity, slug, action, before, after)
        VALUES ('schedule', 'partner', due.slug, 'update',
                jsonb_strip_nulls(jsonb_build_object(
                    'ref_code', CASE WHEN due.ref_code IS NOT NULL THEN old.ref_code END,
                    'channel_codes',
                    CASE WHEN due.channel_codes IS NOT NULL THEN old.channel_codes END)),
                jsonb_strip_nulls(jsonb_build_object(
                    'ref_code', due.ref_code, 'channel_codes', due.channel_codes,
                    'valid_from', due.valid_from, 'scheduled_by', due.created_by)));
        applied := applied + 1;
    END LOOP;
    RETURN applied;
END;
$$;
