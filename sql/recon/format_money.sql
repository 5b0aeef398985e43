-- Minor units as people read them, for the sentences of explanations: 12390 EUR -> '123.90 EUR', 1500 JPY ->
-- '1500 JPY', by the currency's ISO 4217 exponent (2 unless listed; kept in step with src/protocol/iso-4217.ts by a
-- test). Exact numeric arithmetic, never a float. PL/pgSQL rather than SQL: a SQL function with this body is not
-- inlined, and each call then cost 17 us against 2.6 us here.
CREATE FUNCTION recon.format_money(amount bigint, currency text) RETURNS text
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
  unit bigint := (10 ^ exponent)::bigint;
  magnitude numeric := abs(amount::numeric);
  suffix text := coalesce(' ' || nullif(btrim(currency), ''), '');
BEGIN
  IF amount IS NULL THEN
    RETURN NULL;
  END IF;
  IF exponent = 0 THEN
    RETURN amount::text || suffix;
  END IF;
  RETURN CASE WHEN amount < 0 THEN '-' ELSE '' END || div(magnitude, unit)::text || '.'
    || lpad(mod(magnitude, unit)::text, exponent, '0') || suffix;
END
$$;
