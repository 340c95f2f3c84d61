-- Placements (issue 42): a partner's sub-ID parameter, which every Location of its links carries
-- with a token naming the link and the click's channel (never the reader), how the tokens are
-- written, and referral codes per channel ([{"channel": "newsletter" or "nl-*", "ref_code": ...}],
-- first match wins). refgate checks every value on save and again in every snapshot build; the
-- constraints here only keep hand-written SQL within the same shapes. Partners are part of the
-- snapshot, so the existing trigger NOTIFYs on every change.
ALTER TABLE refgate_partners
    ADD COLUMN subid_param   text CHECK (subid_param ~ '^[A-Za-z0-9_.-]{1,64}$'),
    ADD COLUMN subid_style   text NOT NULL DEFAULT 'opaque'
        CHECK (subid_style IN ('opaque', 'readable')),
    ADD COLUMN subid_charset text NOT NULL DEFAULT 'a-z0-9'
        CHECK (subid_charset ~ '^[A-Za-z0-9_.-]{1,64}$'),
    ADD COLUMN channel_codes jsonb NOT NULL DEFAULT '[]'
        CHECK (jsonb_typeof(channel_codes) = 'array');
