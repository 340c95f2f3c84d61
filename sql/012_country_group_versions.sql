-- Country groups editable through the admin API (issue 19): each family's mapping gains a version
-- (the API's ETag; every change, by the API or an import, bumps it) and its changes are audited
-- like partners' and links'. Versions come from one sequence, so a family deleted and created again
-- never repeats an ETag a client may still hold.
CREATE SEQUENCE refgate_country_group_versions;
ALTER TABLE refgate_country_groups
    ADD COLUMN version bigint NOT NULL DEFAULT nextval('refgate_country_group_versions');

CREATE FUNCTION refgate_country_groups_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.version := nextval('refgate_country_group_versions');
    NEW.updated_at := now();
    RETURN NEW;
END;
$$;

CREATE TRIGGER refgate_country_groups_bump
    BEFORE UPDATE ON refgate_country_groups
    FOR EACH ROW EXECUTE FUNCTION refgate_country_groups_bump();

ALTER TABLE refgate_audit DROP CONSTRAINT refgate_audit_entity_check;
-- NOT VALID: every existing row passed the narrower check, so the (growing) audit table is not
-- scanned under an exclusive lock.
ALTER TABLE refgate_audit ADD CONSTRAINT refgate_audit_entity_check
    CHECK (entity IN ('partner', 'link', 'token', 'disclosure', 'user', 'country_group')) NOT VALID;
