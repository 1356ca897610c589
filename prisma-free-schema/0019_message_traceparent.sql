-- Traces from admission to the receiver (issue 18, part 3; docs/operations.md, "Tracing").
--
-- The W3C traceparent of the admission that stored the message (null when tracing is off), so the worker that
-- attempts any of its deliveries continues the same trace. The claim statement reads it with the message row it
-- already joins: no statement and no round trip is added.
ALTER TABLE messages ADD COLUMN traceparent text;
