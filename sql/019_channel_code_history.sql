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
