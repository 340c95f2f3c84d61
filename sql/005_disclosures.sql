-- The affiliate disclosure texts publishers show beside paid picks. Append-only: every change is a
-- new version of its (key, locale), so that the words live on any day can be shown later. The
-- current version is the highest. Changes reach every instance like partner and link changes.

CREATE TABLE refgate_disclosures (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- 'general' for the publisher-wide text, otherwise the slug of the partner it is for.
    key        text NOT NULL CHECK (key ~ '^[a-z0-9][a-z0-9-]{0,63}$'),
    -- A lower-case language tag: 'en', 'de', 'de-at'.
    locale     text NOT NULL CHECK (locale ~ '^[a-z]{2,3}(-[a-z0-9]{1,8}){0,4}$'
                                    AND length(locale) <= 35),
    version    bigint NOT NULL CHECK (version >= 1),
    text       text NOT NULL CHECK (length(text) BETWEEN 1 AND 2000),
    -- Sanitised HTML; derived from text when the editor gave none (html_given false).
    html       text NOT NULL CHECK (octet_length(html) <= 64000),
    html_given boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    created_by text NOT NULL,
    UNIQUE (key, locale, version)
);

CREATE FUNCTION refgate_disclosures_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'refgate_disclosures is append-only: store a new version instead';
END;
$$;

CREATE TRIGGER refgate_disclosures_append_only
    BEFORE UPDATE OR DELETE ON refgate_disclosures
    FOR EACH ROW EXECUTE FUNCTION refgate_disclosures_append_only();

CREATE TRIGGER refgate_disclosures_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON refgate_disclosures
    FOR EACH STATEMENT EXECUTE FUNCTION refgate_snapshot_changed();
