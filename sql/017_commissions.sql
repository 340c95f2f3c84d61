-- Commissions (issue 43): what the networks report about orders that followed clicks, keyed by
-- (partner, order_id), with the link and channel their subid (a placement token) or tracking_id
-- (a per-channel code) resolves to; neither resolvable: kept with both NULL (unattributed).
-- Only the fields below exist: a report's other columns are dropped before anything is stored.
-- Amounts are numeric (exact, in their own currency); there is no floating point anywhere.
-- A partner's deletion deletes its commissions (the API refuses it while the partner has links).
CREATE TABLE refgate_commissions (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    partner_id    bigint NOT NULL REFERENCES refgate_partners (id) ON DELETE CASCADE,
    order_id      text   NOT NULL CHECK (order_id ~ '^[A-Za-z0-9][A-Za-z0-9_.:/#-]{0,127}$'),
    subid         text   CHECK (subid ~ '^[A-Za-z0-9_.-]{1,113}$'),
    tracking_id   text   CHECK (tracking_id ~ '^[A-Za-z0-9_.-]{1,128}$'),
    -- No foreign key: a deleted link's commissions keep its id, as its click counts do.
    link_id       bigint,
    channel       text   COLLATE "C"
        CHECK (channel ~ '^[a-z0-9][a-z0-9._-]*$' AND length(channel) <= 48),
    status        text   NOT NULL CHECK (status IN ('pending', 'approved', 'reversed', 'paid')),
    amount        numeric NOT NULL CHECK (amount >= 0 AND scale(amount) <= 6),
    currency      text   NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    occurred_at   timestamptz NOT NULL,
    first_seen_at timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    CHECK ((subid IS NULL) <> (tracking_id IS NULL)),
    UNIQUE (partner_id, order_id)
);
-- The earnings answers read by day of occurred_at, per link.
CREATE INDEX refgate_commissions_occurred_idx ON refgate_commissions (occurred_at);
CREATE INDEX refgate_commissions_link_idx ON refgate_commissions (link_id, occurred_at);

-- Every status and amount a commission had, with when refgate saw it: a row when it is first
-- recorded and one per change; a repeat with nothing new adds none.
CREATE TABLE refgate_commission_history (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    commission_id bigint NOT NULL REFERENCES refgate_commissions (id) ON DELETE CASCADE,
    status        text   NOT NULL CHECK (status IN ('pending', 'approved', 'reversed', 'paid')),
    amount        numeric NOT NULL CHECK (amount >= 0),
    currency      text   NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    occurred_at   timestamptz NOT NULL,
    seen_at       timestamptz NOT NULL DEFAULT now(),
    source        text   NOT NULL CHECK (source IN ('import', 'api', 'postback'))
);
CREATE INDEX refgate_commission_history_commission_idx
    ON refgate_commission_history (commission_id, id);

-- A partner's postback secret, as the SHA-256 of its text (shown once, never stored); a new one
-- replaces the old, which stops working at once.
CREATE TABLE refgate_postback_secrets (
    partner_id  bigint PRIMARY KEY REFERENCES refgate_partners (id) ON DELETE CASCADE,
    secret_hash bytea  NOT NULL CHECK (length(secret_hash) = 32),
    created_at  timestamptz NOT NULL DEFAULT now()
);
