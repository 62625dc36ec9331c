-- Issue 15 item 2: feedback cannot be used by one principal to bury or promote an entry.
-- Each helpful/harmful case records who gave it (`giver`, NULL for cases given before
-- this migration). The entry's `score` becomes a derived figure: the owner's score
-- (`owner_score`) combined with the median of the distinct non-owner voters' scores
-- (`knowledge_score_vote`, one row per voter, a new vote replaces that voter's old one).
-- `harmful_weight` is the harmful figure seed 003's quality formula uses: one principal's
-- n-th harmful case on an entry weighs 4^-(n-1). Rules: docs/feedback.md.

ALTER TABLE knowledge ADD COLUMN IF NOT EXISTS owner_score smallint;
UPDATE knowledge SET owner_score = score WHERE owner_score IS NULL;
ALTER TABLE knowledge ALTER COLUMN owner_score SET NOT NULL;
ALTER TABLE knowledge DROP CONSTRAINT IF EXISTS knowledge_owner_score_check;
ALTER TABLE knowledge ADD CONSTRAINT knowledge_owner_score_check CHECK (owner_score BETWEEN 1 AND 5);

-- Cases given before this migration have no giver: each keeps counting 1, as it did.
ALTER TABLE knowledge ADD COLUMN IF NOT EXISTS harmful_weight double precision NOT NULL DEFAULT 0;
UPDATE knowledge SET harmful_weight = harmful WHERE harmful_weight = 0 AND harmful > 0;

ALTER TABLE knowledge_feedback ADD COLUMN IF NOT EXISTS giver text;
CREATE INDEX IF NOT EXISTS knowledge_feedback_giver_idx ON knowledge_feedback (knowledge_id, kind, giver);

CREATE TABLE IF NOT EXISTS knowledge_score_vote (
  knowledge_id text NOT NULL REFERENCES knowledge (id) ON DELETE CASCADE,
  voter        text NOT NULL,
  score        smallint NOT NULL CHECK (score BETWEEN 1 AND 5),
  created_at   timestamptz NOT NULL,
  PRIMARY KEY (knowledge_id, voter)
);
