-- The editors' admin API: bearer tokens (stored only as SHA-256 hashes), an audit trail written in
-- the same transaction as every change, and the history of each partner's referral code.

CREATE TABLE refgate_api_tokens (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name         text NOT NULL CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$'),
    role         text NOT NULL CHECK (role IN ('viewer', 'editor', 'admin')),
    -- SHA-256 of the whole token text; the token itself is shown once and never stored.
    token_hash   bytea NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_on date,
    revoked_at   timestamptz
);

-- A name names one live token; a revoked token's name may be used again.
CREATE UNIQUE INDEX refgate_api_tokens_live_name_idx ON refgate_api_tokens (name)
    WHERE revoked_at IS NULL;

CREATE TABLE refgate_audit (
    id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at     timestamptz NOT NULL DEFAULT now(),
    actor  text NOT NULL,   -- the token's name ("cli" for the refgate command)
    entity text NOT NULL CHECK (entity IN ('partner', 'link', 'token', 'disclosure')),
    slug   text NOT NULL,
    action text NOT NULL CHECK (action IN ('create', 'update', 'delete', 'revoke')),
    before jsonb,
    after  jsonb
);

CREATE INDEX refgate_audit_entity_idx ON refgate_audit (entity, slug, id);

-- Every referral code a partner has had, with the interval it was live (live_until NULL: live
-- now). Kept by a trigger, so imports and direct SQL are recorded as well as API writes.
CREATE TABLE refgate_partner_codes (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    partner_id bigint NOT NULL REFERENCES refgate_partners (id) ON DELETE CASCADE,
    ref_param  text NOT NULL,
    ref_code   text NOT NULL,
    live_from  timestamptz NOT NULL,
    live_until timestamptz
);

CREATE INDEX refgate_partner_codes_partner_idx ON refgate_partner_codes (partner_id, id);

INSERT INTO refgate_partner_codes (partner_id, ref_param, ref_code, live_from)
SELECT id, ref_param, ref_code, created_at FROM refgate_partners;

CREATE FUNCTION refgate_partner_code_history() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        IF NEW.ref_code = OLD.ref_code AND NEW.ref_param = OLD.ref_param THEN
            RETURN NULL;
        END IF;
        UPDATE refgate_partner_codes SET live_until = now()
        WHERE partner_id = NEW.id AND live_until IS NULL;
    END IF;
    INSERT INTO refgate_partner_codes (partner_id, ref_param, ref_code, live_from)
    VALUES (NEW.id, NEW.ref_param, NEW.ref_code, now());
    RETURN NULL;
END;
$$;

CREATE TRIGGER refgate_partner_code_history
    AFTER INSERT OR UPDATE OF ref_code, ref_param ON refgate_partners
    FOR EACH ROW EXECUTE FUNCTION refgate_partner_code_history();
