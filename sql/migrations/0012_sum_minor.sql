-- A sum of minor units that stays a bigint.
--
-- sum(bigint) adds up in a 128-bit state allocated per group and returns numeric: the verdict statement's pass over
-- the transactions paid, for each of half a million orders per slice and each of its three sums, that allocation
-- and a numeric built only to be cast back to bigint (a tenth of an aggregate that groups the transactions by
-- order). recon.sum_minor adds with int8pl, bigint's own +: the state is the bigint itself. Null inputs are skipped
-- and a sum of none is null, as with sum; a total beyond the bigint range fails ("bigint out of range"), as the cast
-- back to bigint did.
CREATE AGGREGATE recon.sum_minor(bigint) (SFUNC = int8pl, STYPE = bigint, COMBINEFUNC = int8pl, PARALLEL = SAFE);

COMMENT ON AGGREGATE recon.sum_minor(bigint) IS
  'sum of bigint minor units as a bigint (no numeric on the way); null over no non-null input; fails beyond the bigint range.';
