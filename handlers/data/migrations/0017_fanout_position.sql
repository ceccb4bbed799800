-- Issue 39: the webhook fan-out's high-water mark moves to a settings key that only builds from this one
-- on read and write. Processes from before 0016 move webhooks_fanout_seq by sequence, without the
-- visibility horizon, and could carry it past an event that commits later; with the mark on its own key
-- they can no longer move the mark this build follows (docs/decisions.md, docs/fleet.md). The old row is
-- copied under a row lock, so no fan-out moves it between the read and this migration's commit.
INSERT INTO "settings" ("key", "value")
  SELECT 'webhooks_fanout_position', "value" FROM "settings" WHERE "key" = 'webhooks_fanout_seq' FOR UPDATE
  ON CONFLICT ("key") DO NOTHING;
