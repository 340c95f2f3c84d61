-- Several branded domains (issue 46): each domain is a host that serves its own namespace of
-- slugs. A link's `domain` is NULL for the default domain (the one domain with is_default, or,
-- while no domain is defined, the public base URL's host), otherwise the host of another
-- domain; a slug is unique per domain. Existing links keep NULL: they are on the default domain
-- and behave exactly as before, with or without a domain row.
CREATE TABLE refgate_domains (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- A lower-case DNS name (the service checks it as it checks destinations' hosts).
    host       text NOT NULL UNIQUE
        CHECK (host = lower(host) AND host ~ '^[a-z0-9][a-z0-9.-]{0,252}$'),
    is_default boolean NOT NULL DEFAULT false,
    -- Where unknown slugs on this host go (an https URL); NULL: the 404 page.
    not_found  text CHECK (length(not_found) <= 2048 AND not_found LIKE 'https://%'),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    version    bigint NOT NULL DEFAULT 1
);

-- At most one default at any time ...
CREATE UNIQUE INDEX refgate_domains_one_default ON refgate_domains (is_default) WHERE is_default;

-- ... and, once any domain exists, exactly one, checked at commit so that a transaction can move
-- the default from one domain to another.
CREATE FUNCTION refgate_domains_check_default() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM refgate_domains)
       AND NOT EXISTS (SELECT 1 FROM refgate_domains WHERE is_default) THEN
        RAISE EXCEPTION 'exactly one domain must be the default'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'refgate_domains_default';
    END IF;
    RETURN NULL;
END;
$$;

CREATE CONSTRAINT TRIGGER refgate_domains_default
    AFTER INSERT OR UPDATE OR DELETE ON refgate_domains
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION refgate_domains_check_default();

CREATE TRIGGER refgate_domains_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON refgate_domains
    FOR EACH STATEMENT EXECUTE FUNCTION refgate_snapshot_changed();

ALTER TABLE refgate_links
    ADD COLUMN domain text REFERENCES refgate_domains (host) ON UPDATE CASCADE;

-- A link that names the default domain's host is stored as on the default domain (NULL), so
-- that one slug cannot be taken twice on the same host.
CREATE FUNCTION refgate_links_default_domain() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.domain IS NOT NULL
       AND EXISTS (SELECT 1 FROM refgate_domains WHERE host = NEW.domain AND is_default) THEN
        NEW.domain := NULL;
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER refgate_links_default_domain
    BEFORE INSERT OR UPDATE OF domain ON refgate_links
    FOR EACH ROW EXECUTE FUNCTION refgate_links_default_domain();

-- A slug is unique per domain.
ALTER TABLE refgate_links DROP CONSTRAINT refgate_links_slug_key;
CREATE UNIQUE INDEX refgate_links_domain_slug_key ON refgate_links ((coalesce(domain, '')), slug);
CREATE INDEX refgate_links_slug_idx ON refgate_links (slug);

ALTER TABLE refgate_audit DROP CONSTRAINT refgate_audit_entity_check;
ALTER TABLE refgate_audit ADD CONSTRAINT refgate_audit_entity_check
    CHECK (entity IN ('partner', 'link', 'token', 'disclosure', 'user', 'country_group',
                      'webhook', 'domain')) NOT VALID;
