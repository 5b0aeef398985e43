-- 1234 EUR -> 12.34, 1500 JPY -> 1500, 1234 KWD -> 1.234, by the ISO 4217 exponent recon uses everywhere (2 for a
-- missing or unknown code): the table of recon.format_money, kept in step with packages/protocol's by a test.
-- Multiplying by the unit's size in minor units is exact, and the product's scale is the constant's: the exponent.
-- One SQL expression, each argument used once, so that the planner inlines it into the views: a PL/pgSQL call
-- cost 1.3 us, 0.16 s of CPU for a column of the 124,000 open exceptions. The body names nothing in schema recon,
-- which the readers may not use.
CREATE FUNCTION recon.minor_to_unit(amount bigint, currency text) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT amount::numeric * CASE upper(btrim(currency))
    WHEN 'BIF' THEN 1 WHEN 'CLP' THEN 1 WHEN 'DJF' THEN 1 WHEN 'GNF' THEN 1 WHEN 'ISK' THEN 1 WHEN 'JPY' THEN 1
    WHEN 'KMF' THEN 1 WHEN 'KRW' THEN 1 WHEN 'PYG' THEN 1 WHEN 'RWF' THEN 1 WHEN 'UGX' THEN 1 WHEN 'UYI' THEN 1
    WHEN 'VND' THEN 1 WHEN 'VUV' THEN 1 WHEN 'XAF' THEN 1 WHEN 'XOF' THEN 1 WHEN 'XPF' THEN 1
    WHEN 'BHD' THEN 0.001 WHEN 'IQD' THEN 0.001 WHEN 'JOD' THEN 0.001 WHEN 'KWD' THEN 0.001 WHEN 'LYD' THEN 0.001
    WHEN 'OMR' THEN 0.001 WHEN 'TND' THEN 0.001
    WHEN 'CLF' THEN 0.0001 WHEN 'UYW' THEN 0.0001
    ELSE 0.01 END
$$;
