-- Partners and links: the system of record for redirects. Every change bumps a single version
-- and notifies listening instances, which reload their in-memory snapshot.

CREATE TABLE refgate_partners (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    slug            text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9][a-z0-9-]{0,63}$'),
    name            text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    ref_param       text NOT NULL CHECK (ref_param ~ '^[A-Za-z0-9_.-]{1,64}$'),
    ref_code        text NOT NULL CHECK (length(ref_code) BETWEEN 1 AND 128),
    allowed_domains text[] NOT NULL CHECK (cardinality(allowed_domains) BETWEEN 1 AND 64),
    -- An array of [name, value] pairs, so that the order editors gave is kept.
    extra_params    jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(extra_params) = 'array'),
    active          boolean NOT NULL DEFAULT true,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    version         bigint NOT NULL DEFAULT 1
);

CREATE TABLE refgate_links (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    slug            text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9][a-z0-9-]{0,63}$'),
    partner_id      bigint NOT NULL REFERENCES refgate_partners (id),
    destination     text NOT NULL CHECK (length(destination) <= 2048),
    status          text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
    expires_at      timestamptz,
    fallback        text CHECK (length(fallback) <= 2048),
    utm_passthrough boolean NOT NULL DEFAULT false,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    version         bigint NOT NULL DEFAULT 1
);

CREATE INDEX refgate_links_partner_idx ON refgate_links (partner_id);

-- One row: the version of everything a snapshot is built from.
CREATE TABLE refgate_snapshot_version (
    id      boolean PRIMARY KEY DEFAULT true CHECK (id),
    version bigint NOT NULL
);
INSERT INTO refgate_snapshot_version (id, version) VALUES (true, 1);

CREATE FUNCTION refgate_snapshot_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    new_version bigint;
BEGIN
    UPDATE refgate_snapshot_version SET version = version + 1 RETURNING version INTO new_version;
    -- Delivered at commit, to every instance that LISTENs.
    PERFORM pg_notify('refgate_snapshot', new_version::text);
    RETURN NULL;
END;
$$;

CREATE TRIGGER refgate_partners_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON refgate_partners
    FOR EACH STATEMENT EXECUTE FUNCTION refgate_snapshot_changed();

CREATE TRIGGER refgate_links_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON refgate_links
    FOR EACH STATEMENT EXECUTE FUNCTION refgate_snapshot_changed();
