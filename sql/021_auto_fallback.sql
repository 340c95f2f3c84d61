-- Automatic fallback (issue 44). A link with auto_fallback (it needs a fallback) sends the readers
-- of a branch whose confirmed health is broken, unavailable or code_dropped elsewhere: a rule
-- branch to the link's own destination while that is healthy, else (and the default branch) to
-- the fallback. The checker keeps the branches it switched away in refgate_link_fallbacks (one
-- function writes them with their audit entry, actor 'health'); the snapshot is built from them,
-- so a switch reaches every instance as any edit does.

ALTER TABLE refgate_links ADD COLUMN auto_fallback boolean NOT NULL DEFAULT false;
-- Every existing row has auto_fallback false: nothing to scan.
ALTER TABLE refgate_links ADD CONSTRAINT refgate_links_auto_fallback_check
    CHECK (NOT auto_fallback OR fallback IS NOT NULL) NOT VALID;

CREATE TABLE refgate_link_fallbacks (
    link_id bigint NOT NULL REFERENCES refgate_links (id) ON DELETE CASCADE,
    branch  text NOT NULL,
    reason  text NOT NULL CHECK (reason IN ('broken', 'unavailable', 'code_dropped')),
    detail  text NOT NULL DEFAULT '',
    since   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (link_id, branch)
);

CREATE TRIGGER refgate_link_fallbacks_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON refgate_link_fallbacks
    FOR EACH STATEMENT EXECUTE FUNCTION refgate_snapshot_changed();
