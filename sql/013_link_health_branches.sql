-- Link health per targeting branch (issue 18): a link with rules has one real Location per branch
-- (each with its partner's code), and each is checked and kept on its own. `branch` names it:
-- 'default' (the link's own destination), 'rules[i]' or 'rules[i].split[j]'. A link's state is
-- its worst branch's (refgate_health_rank; the checker's domain code ranks findings the same).

ALTER TABLE refgate_link_health ADD COLUMN branch text NOT NULL DEFAULT 'default';
ALTER TABLE refgate_link_health DROP CONSTRAINT refgate_link_health_pkey;
ALTER TABLE refgate_link_health ADD PRIMARY KEY (link_id, branch);

ALTER TABLE refgate_link_health_checks ADD COLUMN branch text NOT NULL DEFAULT 'default';

-- Higher is worse: a reader who gets nothing, then a commission lost, then a weaker page.
CREATE FUNCTION refgate_health_rank(state text) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE state
        WHEN 'ok' THEN 0 WHEN 'unavailable' THEN 1 WHEN 'homepage' THEN 2 WHEN 'moved' THEN 3
        WHEN 'code_dropped' THEN 4 WHEN 'redirect_loop' THEN 5 WHEN 'refused' THEN 6
        WHEN 'broken' THEN 7 ELSE 8 END
$$;

-- A link's state: its worst branch's.
CREATE VIEW refgate_link_health_worst AS
SELECT DISTINCT ON (link_id) link_id, branch, state, detail
FROM refgate_link_health
ORDER BY link_id, refgate_health_rank(state) DESC, branch = 'default' DESC, branch;
