-- Webhooks (issue 44): the receivers editors register, an outbox of events written in the same
-- transaction as the change that causes them, and one delivery row per (webhook, event) that the
-- delivering instance works through in event order per webhook.

CREATE TABLE refgate_webhooks (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    url             text    NOT NULL CHECK (url LIKE 'https://%' AND length(url) <= 2048),
    events          text[]  NOT NULL CHECK (cardinality(events) BETWEEN 1 AND 32),
    active          boolean NOT NULL DEFAULT true,
    -- "whsec_" + base64 of 32 random bytes: kept as is, since signing needs the bytes.
    secret          text    NOT NULL CHECK (secret LIKE 'whsec\_%'),
    version         bigint  NOT NULL DEFAULT 1,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    disabled_at     timestamptz,
    disabled_reason text,
    -- The first failed attempt since the last success; a webhook failing for the give-up window
    -- is disabled.
    failing_since   timestamptz
);

CREATE TABLE refgate_webhook_events (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    type       text NOT NULL,
    -- The exact bytes delivered and signed: {"type", "timestamp", "data"}.
    body       text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE refgate_webhook_deliveries (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    webhook_id      bigint  NOT NULL REFERENCES refgate_webhooks (id) ON DELETE CASCADE,
    event_id        bigint  NOT NULL REFERENCES refgate_webhook_events (id) ON DELETE CASCADE,
    status          text    NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'delivered', 'failed')),
    attempt         integer NOT NULL DEFAULT 0,
    -- Since when it waits (its emission, or a "send again"): past the give-up window it fails.
    queued_at       timestamptz NOT NULL DEFAULT now(),
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_attempt_at timestamptz,
    response_status integer,
    duration_ms     integer,
    error           text,
    UNIQUE (webhook_id, event_id)
);
CREATE INDEX refgate_webhook_deliveries_pending_idx
    ON refgate_webhook_deliveries (webhook_id, event_id) WHERE status = 'pending';
CREATE INDEX refgate_webhook_deliveries_log_idx ON refgate_webhook_deliveries (webhook_id, id);

ALTER TABLE refgate_audit DROP CONSTRAINT refgate_audit_entity_check;
ALTER TABLE refgate_audit ADD CONSTRAINT refgate_audit_entity_check
    CHECK (entity IN ('partner', 'link', 'token', 'disclosure', 'user', 'country_group', 'webhook'))
    NOT VALID;

-- The one way in: an event of `type` with `data`, queued for every active webhook that takes it,
-- in the caller's transaction. Without such a webhook nothing is written. Returns the event's id
-- (NULL: nobody takes it).
CREATE FUNCTION refgate_webhook_emit(p_type text, p_data jsonb) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    event_id bigint;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM refgate_webhooks
                   WHERE active AND (p_type = ANY (events) OR '*' = ANY (events))) THEN
        RETURN NULL;
    END IF;
    INSERT INTO refgate_webhook_events (type, body)
    VALUES (p_type, json_build_object(
        'type', p_type,
        'timestamp', to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'data', p_data)::text)
    RETURNING id INTO event_id;
    INSERT INTO refgate_webhook_deliveries (webhook_id, event_id)
    SELECT id, event_id FROM refgate_webhooks
    WHERE active AND (p_type = ANY (events) OR '*' = ANY (events));
    RETURN event_id;
END;
$$;

-- Every audited change of a partner, link or disclosure (the API, the import, the CLI and the
-- code schedule all audit) is an event, in the audit entry's transaction. A scheduled code's
-- entry is not a partner.updated: the code change itself is partner.code_changed (below); nor is
-- an automatic fallback's switch (actor health) a link.updated: it is link.fallback_changed.
CREATE FUNCTION refgate_webhook_audit_event() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.entity = 'disclosure' THEN
        PERFORM refgate_webhook_emit('disclosure.changed', jsonb_build_object(
            'key', split_part(NEW.slug, '/', 1), 'locale', split_part(NEW.slug, '/', 2),
            'action', NEW.action, 'disclosure', coalesce(NEW.after, NEW.before)));
    ELSIF NEW.entity IN ('partner', 'link') AND NEW.actor NOT IN ('schedule', 'health') THEN
        PERFORM refgate_webhook_emit(
            NEW.entity || CASE NEW.action WHEN 'create' THEN '.created'
                                          WHEN 'delete' THEN '.deleted' ELSE '.updated' END,
            jsonb_build_object(NEW.entity, coalesce(NEW.after, NEW.before), 'actor', NEW.actor));
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER refgate_webhook_audit_event AFTER INSERT ON refgate_audit
    FOR EACH ROW EXECUTE FUNCTION refgate_webhook_audit_event();

-- A partner's referral code changed: by an editor, an import, or a scheduled code taking effect
-- (refgate_apply_due_codes() runs in the first instance that sees it due, once fleet-wide, and
-- sets refgate.code_at to the scheduled moment).
CREATE FUNCTION refgate_webhook_code_event() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    at text := nullif(current_setting('refgate.code_at', true), '');
BEGIN
    PERFORM refgate_webhook_emit('partner.code_changed', jsonb_build_object(
        'partner', NEW.slug, 'ref_param', NEW.ref_param, 'ref_code', NEW.ref_code,
        'previous_ref_code', OLD.ref_code, 'scheduled', at IS NOT NULL,
        'effective_at', to_char(coalesce(at::timestamptz, now()) AT TIME ZONE 'UTC',
                                'YYYY-MM-DD"T"HH24:MI:SS"Z"')));
    RETURN NULL;
END;
$$;
CREATE TRIGGER refgate_webhook_code_event AFTER UPDATE ON refgate_partners
    FOR EACH ROW WHEN (OLD.ref_code IS DISTINCT FROM NEW.ref_code
                       OR OLD.ref_param IS DISTINCT FROM NEW.ref_param)
    EXECUTE FUNCTION refgate_webhook_code_event();

-- Commissions (issue 43): recorded when first stored, status_changed when a later report
-- changes its status. Amounts as exact decimal text.
CREATE FUNCTION refgate_webhook_commission_event() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    data jsonb;
BEGIN
    data := jsonb_build_object(
        'partner', (SELECT slug FROM refgate_partners WHERE id = NEW.partner_id),
        'order_id', NEW.order_id,
        'link', (SELECT slug FROM refgate_links WHERE id = NEW.link_id),
        'channel', NEW.channel, 'status', NEW.status, 'amount', NEW.amount::text,
        'currency', NEW.currency,
        'occurred_at', to_char(NEW.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'));
    IF TG_OP = 'INSERT' THEN
        PERFORM refgate_webhook_emit('commission.recorded', data);
    ELSIF OLD.status IS DISTINCT FROM NEW.status THEN
        PERFORM refgate_webhook_emit('commission.status_changed',
                                     data || jsonb_build_object('previous_status', OLD.status));
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER refgate_webhook_commission_event AFTER INSERT OR UPDATE ON refgate_commissions
    FOR EACH ROW EXECUTE FUNCTION refgate_webhook_commission_event();

-- clicks.hourly: the flush adds each bucket's counts per link to the hour it is flushed in (in
-- the flush's transaction, only while a webhook takes clicks.hourly); the delivering instance
-- turns each closed hour into one event per link and deletes its rows, in one transaction.
CREATE TABLE refgate_webhook_clicks_hourly (
    link_id  bigint NOT NULL,
    hour     timestamptz NOT NULL,
    human    bigint NOT NULL DEFAULT 0,
    bot      bigint NOT NULL DEFAULT 0,
    prefetch bigint NOT NULL DEFAULT 0,
    scanner  bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (link_id, hour)
);
