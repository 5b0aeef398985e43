import { expect, it } from 'vitest';
import { formatTextTable } from '../../src/terminal/text-table.ts';

it('aligns columns, shows null as empty and keeps each row on one line', () => {
  expect(
    formatTextTable(
      ['ID', 'AMOUNT', 'NOTE'],
      [
        ['A1', 12390, 'two\nlines'],
        ['A200', null, null],
      ],
    ),
  ).toBe(['ID    AMOUNT  NOTE', '----  ------  ---------', 'A1    12390   two lines', 'A200'].join('\n'));
});

it('pads the columns asked for on the left, so that amounts line up on their last digit', () => {
  expect(
    formatTextTable(
      ['CUR', 'AMOUNT'],
      [
        ['EUR', '1,234.56'],
        ['JPY', '5'],
      ],
      [1],
    ),
  ).toBe(['CUR    AMOUNT', '---  --------', 'EUR  1,234.56', 'JPY         5'].join('\n'));
});
