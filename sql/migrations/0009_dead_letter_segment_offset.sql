-- Migration 9: where a dead letter's frame sits in its segment copy. A dead letter whose
-- payload plain SQL could not decode (zstd) keeps a copy of its whole segment in
-- queen.dead_letters.segment; without the segment's first offset the frame of msg_offset
-- cannot be found in that copy once retention has removed the live segment. Filled on
-- insert by the trigger in sql/procedures/74_dead_letter_segment_offset.sql.
ALTER TABLE queen.dead_letters ADD COLUMN segment_first_offset bigint;
