-- Scoped tokens (issue 46): what a token may do within its role, whose links it may see, and
-- until when. A token can never exceed its role: the API checks the role first, then the scope.

-- The scopes the token was given (links:read, links:write, partners:read, partners:write,
-- stats:read, earnings:read, disclosures:write, webhooks:write, users:write); NULL: everything
-- its role allows (every token created before this migration).
ALTER TABLE refgate_api_tokens ADD COLUMN scopes text[];
-- Partner slugs: the token sees and changes only those partners and their links; empty: all.
ALTER TABLE refgate_api_tokens ADD COLUMN partners text[] NOT NULL DEFAULT '{}';
-- Hosts: the token sees and changes only links on those domains; empty: all.
ALTER TABLE refgate_api_tokens ADD COLUMN domains text[] NOT NULL DEFAULT '{}';
-- From this moment the token is refused (401); NULL: never.
ALTER TABLE refgate_api_tokens ADD COLUMN expires_at timestamptz;
