-- 1234 EUR -> 12.34, 1500 JPY -> 1500, 1234 KWD -> 1.234, by the ISO 4217 exponent recon uses everywhere (2 for a
-- missing or unknown code): the table of recon.format_money, kept in step with packages/protocol's by a test.
-- Numeric division by a power of ten is exact at these scales; the rounding only sets the scale to the exponent.
-- PL/pgSQL as format_money: a SQL body is parsed as the reader, who may not use schema recon.
CREATE FUNCTION recon.minor_to_unit(amount bigint, currency text) RETURNS numeric
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  exponent integer := CASE upper(btrim(currency))
    WHEN 'BIF' THEN 0 WHEN 'CLP' THEN 0 WHEN 'DJF' THEN 0 WHEN 'GNF' THEN 0 WHEN 'ISK' THEN 0 WHEN 'JPY' THEN 0
    WHEN 'KMF' THEN 0 WHEN 'KRW' THEN 0 WHEN 'PYG' THEN 0 WHEN 'RWF' THEN 0 WHEN 'UGX' THEN 0 WHEN 'UYI' THEN 0
    WHEN 'VND' THEN 0 WHEN 'VUV' THEN 0 WHEN 'XAF' THEN 0 WHEN 'XOF' THEN 0 WHEN 'XPF' THEN 0
    WHEN 'BHD' THEN 3 WHEN 'IQD' THEN 3 WHEN 'JOD' THEN 3 WHEN 'KWD' THEN 3 WHEN 'LYD' THEN 3 WHEN 'OMR' THEN 3
    WHEN 'TND' THEN 3
    WHEN 'CLF' THEN 4 WHEN 'UYW' THEN 4
    ELSE 2 END;
BEGIN
  RETURN round(amount::numeric / (10::numeric ^ exponent), exponent);
END
$$;
