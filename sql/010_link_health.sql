-- Link health (issue 18): the latest state per link and a bounded history of checks. The state is
-- the confirmed finding; a finding seen once waits in pending_* for its second check.

CREATE TABLE refgate_link_health (
    link_id        bigint PRIMARY KEY REFERENCES refgate_links (id) ON DELETE CASCADE,
    state          text NOT NULL CHECK (state IN ('ok', 'broken', 'code_dropped', 'homepage',
                                                  'moved', 'unavailable', 'redirect_loop',
                                                  'refused')),
    detail         text NOT NULL DEFAULT '',
    since          timestamptz NOT NULL,
    pending_state  text,
    pending_detail text,
    confirm_at     timestamptz,
    checked_at     timestamptz NOT NULL,
    last_finding   text NOT NULL,
    last_detail    text NOT NULL DEFAULT '',
    chain          jsonb NOT NULL DEFAULT '[]'
);
CREATE INDEX refgate_link_health_state ON refgate_link_health (state);

-- The last checks of each link (the checker keeps 20), newest first by id.
CREATE TABLE refgate_link_health_checks (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    link_id     bigint NOT NULL REFERENCES refgate_links (id) ON DELETE CASCADE,
    checked_at  timestamptz NOT NULL,
    finding     text NOT NULL,
    detail      text NOT NULL DEFAULT '',
    duration_ms integer NOT NULL,
    chain       jsonb NOT NULL
);
CREATE INDEX refgate_link_health_checks_link ON refgate_link_health_checks (link_id, id DESC);
