-- How a generation ended, as typed columns (not `options`): the stop reason
-- (`stop`, `length`, `repeat`, `refusal`, `content_filter`,
-- `invalid_output`, `error`), the token counts, and how the raw output
-- spells its claims (`grounded` or `extractive`: re-verification parses it
-- the same way). NULL in rows written before this migration and in traces
-- where no model was called.
ALTER TABLE groundcite_traces ADD COLUMN stop_reason TEXT;
ALTER TABLE groundcite_traces ADD COLUMN input_tokens BIGINT;
ALTER TABLE groundcite_traces ADD COLUMN output_tokens BIGINT;
ALTER TABLE groundcite_traces ADD COLUMN answer_form TEXT;
