import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

/**
 * src/db/schema.ts is what Kysely believes; the migrations are what PostgreSQL holds. Nothing but this test ties the
 * two together: it reads the `Schema` interface with the TypeScript compiler and the migrated database's catalog, and
 * lists every relation, column, type and nullability on which they disagree.
 *
 * How a column's TypeScript type is read: Kysely's ColumnType<Select, Insert, Update> (and Generated<T>, a ColumnType)
 * is unwrapped to its Select type, member by member of a union, as Kysely's own SelectType does; `null` among the
 * members (or `unknown`, which admits null) makes the column nullable; each other member is reduced to a shape
 * (string, number, boolean, Date, bytes, object, an array of shapes, unknown). Literal unions ('zip' | 'gzip') and
 * branded strings are strings. FAMILIES below says which shapes each PostgreSQL type accepts.
 *
 * How a database column is read: pg_attribute of the tables and views of schemas recon and reporting, its type's name
 * (an array by its element's) and attnotnull. A view's columns are all nullable in the catalog whatever the view
 * returns, so views are compared on names and types only.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SCHEMA_TS = path.join(ROOT, 'src', 'db', 'schema.ts');
const SCHEMAS = ['recon', 'reporting'];

/** Relations that schema.ts leaves untyped on purpose: the database has them, schema.ts need not. */
const ACCOUNTANTS_VIEW =
  "an accountants' view (migration 0005 and later), read with their own SQL tools; recon never queries it through Kysely, and test/reporting checks its columns";
const UNTYPED: Readonly<Record<string, string>> = {
  'reporting.transactions': ACCOUNTANTS_VIEW,
  'reporting.orders': ACCOUNTANTS_VIEW,
  'reporting.exception_ageing': ACCOUNTANTS_VIEW,
  'reporting.daily_summary': ACCOUNTANTS_VIEW,
  'reporting.runs': ACCOUNTANTS_VIEW,
  'reporting.run_totals': ACCOUNTANTS_VIEW,
  'reporting.run_orders': ACCOUNTANTS_VIEW,
  'reporting.files': ACCOUNTANTS_VIEW,
  'reporting.rejected_rows': ACCOUNTANTS_VIEW,
  'reporting.accounts': ACCOUNTANTS_VIEW,
};

/** What one member of a column's select type is, as far as a driver's value goes. */
type Shape = 'string' | 'number' | 'boolean' | 'Date' | 'bytes' | 'object' | 'unknown' | 'other' | { array: Shape[] };

interface Family {
  readonly name: string;
  /** What schema.ts must say, in words, for the report. */
  readonly expects: string;
  /** Whether the non-null members of a select type, all of them, fit a value of this family. */
  accepts(shapes: readonly Shape[]): boolean;
}

const only = (shape: Shape) => (shapes: readonly Shape[]) => shapes.length > 0 && shapes.every((s) => s === shape);
const isContainer = (shape: Shape) => shape === 'object' || typeof shape === 'object';
const isJsonValue = (shape: Shape): boolean =>
  ['string', 'number', 'boolean', 'object'].includes(shape as string) ||
  (typeof shape === 'object' && shape.array.every(isJsonValue));

/**
 * The mapping rules, by PostgreSQL type name: what both drivers recon opens (pg, and PGlite with the parsers of
 * open-database.ts) hand back for a value of that type, and so what the select type in schema.ts must be.
 */
const FAMILIES: ReadonlyArray<Family & { readonly types: readonly string[] }> = [
  {
    name: 'text',
    types: ['text', 'varchar', 'bpchar', 'uuid'],
    expects: 'a string (or string literals)',
    accepts: only('string'),
  },
  { name: 'integer', types: ['int2', 'int4'], expects: 'a number', accepts: only('number') },
  { name: 'float', types: ['float4', 'float8'], expects: 'a number', accepts: only('number') },
  // pg reads int8 as text and PGlite is told to: a JS number would round past 2^53.
  { name: 'bigint-as-string', types: ['int8'], expects: 'a string', accepts: only('string') },
  { name: 'numeric', types: ['numeric'], expects: 'a string', accepts: only('string') },
  { name: 'boolean', types: ['bool'], expects: 'a boolean', accepts: only('boolean') },
  { name: 'timestamp', types: ['timestamptz', 'timestamp'], expects: 'a Date', accepts: only('Date') },
  // Both drivers parse a date into a Date at midnight (UTC for PGlite, local time for pg), never a string.
  { name: 'date', types: ['date'], expects: 'a Date', accepts: only('Date') },
  // Parsed JSON: objects, arrays, or `unknown` when the shape is not promised; a JSON string would be `string`.
  {
    name: 'json',
    types: ['jsonb', 'json'],
    expects: 'an object, array or Record type (or unknown)',
    accepts: (shapes) =>
      (shapes.length === 1 && shapes[0] === 'unknown') || (shapes.some(isContainer) && shapes.every(isJsonValue)),
  },
  // pg hands back a Buffer, PGlite a Uint8Array: Buffer is a Uint8Array, so either name fits.
  { name: 'bytea', types: ['bytea'], expects: 'a Uint8Array or Buffer', accepts: only('bytes') },
];

/** An array's family is its element's: both drivers parse an array into a JS array of what its elements read as. */
function familyOf(column: DatabaseColumn): Family | undefined {
  const element = FAMILIES.find((family) => family.types.includes(column.element ?? column.typeName));
  if (!element || !column.element) return element;
  return {
    name: `${element.name}[]`,
    expects: `an array of ${element.expects}`,
    accepts: (shapes) => shapes.length > 0 && shapes.every((s) => typeof s === 'object' && element.accepts(s.array)),
  };
}

interface TypedColumn {
  readonly nullable: boolean;
  readonly shapes: readonly Shape[];
  /** The select type as written, for the report. */
  readonly text: string;
}
type TypedSchema = Map<string, Map<string, TypedColumn>>;

/** Parsed files other than schema.ts (the libraries, kysely's and node's types), shared by every Program made here. */
const parsedFiles = new Map<string, ts.SourceFile | undefined>();

/**
 * The relations and columns of schema.ts's `Schema`, each column's select type reduced to shapes. `text` stands in
 * for the file's content (a drifted copy).
 */
function readTypedSchema(text?: string): TypedSchema {
  // Compiled as `npm run typecheck` compiles it, with tsconfig.json's options.
  const config = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  if (config.error) throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, '\n'));
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  // Without strict null checks every `| null` disappears from the types, and every column would read as NOT NULL.
  if (!(options.strictNullChecks ?? options.strict))
    throw new Error('tsconfig.json must keep strict null checks for this test to see `| null`');

  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, language, ...rest) => {
    if (text !== undefined && path.resolve(fileName) === SCHEMA_TS)
      return ts.createSourceFile(fileName, text, language);
    if (!parsedFiles.has(fileName)) parsedFiles.set(fileName, getSourceFile(fileName, language, ...rest));
    return parsedFiles.get(fileName);
  };
  const program = ts.createProgram({ rootNames: [SCHEMA_TS], options, host });
  const source = program.getSourceFile(SCHEMA_TS);
  if (!source) throw new Error(`TypeScript did not load ${SCHEMA_TS}`);
  // A type that does not resolve reads as `any`: a schema.ts that does not compile cannot be compared.
  const diagnostics = ts.getPreEmitDiagnostics(program, source);
  if (diagnostics.length > 0) {
    throw new Error(
      ts.formatDiagnostics(diagnostics, {
        getCanonicalFileName: (f) => f,
        getCurrentDirectory: () => ROOT,
        getNewLine: () => '\n',
      }),
    );
  }

  const checker = program.getTypeChecker();
  const moduleSymbol = checker.getSymbolAtLocation(source);
  const schemaSymbol =
    moduleSymbol && checker.getExportsOfModule(moduleSymbol).find((symbol) => symbol.name === 'Schema');
  if (!schemaSymbol) throw new Error('src/db/schema.ts exports no `Schema`');

  const membersOf = (type: ts.Type): ts.Type[] => (type.isUnion() ? type.types : [type]);
  const declaredIn = (type: ts.Type, names: string[]) => {
    const symbol = type.getSymbol();
    return Boolean(
      symbol &&
      names.includes(symbol.name) &&
      symbol.declarations?.every((d) => {
        const file = d.getSourceFile();
        return program.isSourceFileDefaultLibrary(file) || file.fileName.includes('/node_modules/@types/node/');
      }),
    );
  };
  const shapeOf = (type: ts.Type): Shape => {
    if (type.flags & ts.TypeFlags.StringLike) return 'string';
    if (type.flags & ts.TypeFlags.NumberLike) return 'number';
    if (type.flags & ts.TypeFlags.BooleanLike) return 'boolean';
    if (type.flags & ts.TypeFlags.Unknown) return 'unknown';
    if (type.isIntersection()) {
      // A branded primitive (string & { __brand: 'Money' }) is that primitive.
      const shapes = type.types.map(shapeOf);
      return (
        shapes.find((s) => s === 'string' || s === 'number' || s === 'boolean') ??
        (shapes.every((s) => s === 'object') ? 'object' : 'other')
      );
    }
    if (checker.isArrayType(type)) {
      const [element] = checker.getTypeArguments(type as ts.TypeReference);
      return {
        array: element
          ? distinct(
              membersOf(element)
                .filter((m) => !(m.flags & ts.TypeFlags.Null))
                .map(shapeOf),
            )
          : ['other'],
      };
    }
    if (declaredIn(type, ['Date'])) return 'Date';
    if (declaredIn(type, ['Uint8Array', 'Buffer'])) return 'bytes';
    if ((type.flags & ts.TypeFlags.Object) !== 0 && type.getCallSignatures().length === 0) return 'object';
    return 'other';
  };

  const schema: TypedSchema = new Map();
  for (const relation of checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(schemaSymbol))) {
    const columns = new Map<string, TypedColumn>();
    for (const column of checker.getPropertiesOfType(checker.getTypeOfSymbol(relation))) {
      // Kysely's ColumnType is a phantom { __select__: S, __insert__: I, __update__: U }: a union member that has
      // __select__ stands for S, like Kysely's SelectType (so `Timestamp | null` is Date | null).
      const members = membersOf(checker.getTypeOfSymbol(column)).flatMap((member) => {
        const select = member.getProperty('__select__');
        return select ? membersOf(checker.getTypeOfSymbol(select)) : [member];
      });
      const values = members.filter((member) => !(member.flags & ts.TypeFlags.Null));
      const texts = values.map((member) => checker.typeToString(member));
      const text =
        texts.includes('false') && texts.includes('true')
          ? [...texts.filter((t) => t !== 'false' && t !== 'true'), 'boolean']
          : texts;
      columns.set(column.name, {
        // `unknown | null` is just `unknown`: unknown (and any) admit null by themselves.
        nullable:
          values.length < members.length ||
          values.some((member) => member.flags & (ts.TypeFlags.Unknown | ts.TypeFlags.Any)),
        shapes: distinct(values.map(shapeOf)),
        text: [...distinct(text), ...(values.length < members.length ? ['null'] : [])].join(' | '),
      });
    }
    schema.set(relation.name, columns);
  }
  return schema;
}

function distinct<T>(items: readonly T[]): T[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const key = JSON.stringify(item);
    return !seen.has(key) && Boolean(seen.add(key));
  });
}

interface DatabaseColumn {
  /** As PostgreSQL writes it (character(3), timestamp with time zone, text[]), for the report. */
  readonly type: string;
  readonly typeName: string;
  /** The element type's name when the column is an array. */
  readonly element: string | null;
  readonly notNull: boolean;
}
interface DatabaseRelation {
  readonly kind: 'table' | 'view';
  readonly columns: Map<string, DatabaseColumn>;
}

async function readDatabaseSchema(database: Database): Promise<Map<string, DatabaseRelation>> {
  const { rows } = await database.transaction((c) =>
    c.query<{
      relation: string;
      relkind: string;
      attname: string | null;
      type: string | null;
      typname: string | null;
      element: string | null;
      attnotnull: boolean | null;
    }>(
      `SELECT n.nspname || '.' || c.relname AS relation, c.relkind, a.attname, format_type(a.atttypid, a.atttypmod) AS type,
         t.typname, e.typname AS element, a.attnotnull
       FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace
       LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
       LEFT JOIN pg_type t ON t.oid = a.atttypid
       LEFT JOIN pg_type e ON e.oid = t.typelem AND t.typcategory = 'A'
       WHERE n.nspname = ANY ($1) AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
       ORDER BY 1, a.attnum`,
      [SCHEMAS],
    ),
  );
  const relations = new Map<string, DatabaseRelation>();
  for (const row of rows) {
    let relation = relations.get(row.relation);
    if (!relation)
      relations.set(
        row.relation,
        (relation = { kind: row.relkind === 'v' || row.relkind === 'm' ? 'view' : 'table', columns: new Map() }),
      );
    if (row.attname === null) continue;
    relation.columns.set(row.attname, {
      type: row.type!,
      typeName: row.typname!,
      element: row.element,
      notNull: row.attnotnull!,
    });
  }
  return relations;
}

/** Every disagreement, one readable line each, sorted by relation and column. */
function schemaDifferences(database: Map<string, DatabaseRelation>, typed: TypedSchema): string[] {
  const differences: string[] = [];
  for (const [name, reason] of Object.entries(UNTYPED)) {
    if (typed.has(name))
      differences.push(
        `${name}: listed in this test as untyped (${reason}), yet schema.ts types it: drop it from UNTYPED`,
      );
    if (!database.has(name))
      differences.push(
        `${name}: listed in this test as untyped, yet the database has no such relation: drop it from UNTYPED`,
      );
  }
  for (const [name, relation] of database) {
    if (!typed.has(name) && !(name in UNTYPED)) {
      differences.push(
        `${name}: a ${relation.kind} in the database, not in schema.ts (type it, or list it in UNTYPED with the reason)`,
      );
    }
  }
  for (const [name, columns] of typed) {
    const relation = database.get(name);
    if (!relation) {
      const schema = name.includes('.') ? name.slice(0, name.indexOf('.')) : '(no schema)';
      differences.push(
        `${name}: in schema.ts, not in the database${SCHEMAS.includes(schema) ? '' : ` (this test reads schemas ${SCHEMAS.join(' and ')} only)`}`,
      );
      continue;
    }
    for (const [column, stored] of relation.columns) {
      if (!columns.has(column))
        differences.push(
          `${name}.${column}: in the database (${stored.type}${stored.notNull ? ' NOT NULL' : ''}), not in schema.ts`,
        );
    }
    for (const [column, declared] of columns) {
      const stored = relation.columns.get(column);
      if (!stored) {
        differences.push(`${name}.${column}: in schema.ts (${declared.text}), not in the database`);
        continue;
      }
      const family = familyOf(stored);
      if (!family) {
        differences.push(
          `${name}.${column}: the database's type ${stored.type} has no mapping rule in this test: add one to FAMILIES`,
        );
      } else if (!family.accepts(declared.shapes)) {
        differences.push(
          `${name}.${column}: type: the database has ${stored.type} (${family.name}: ${family.expects}), schema.ts has ${declared.text}`,
        );
      }
      // A view's column reads as nullable in the catalog whatever the view returns.
      if (relation.kind === 'table' && stored.notNull === declared.nullable) {
        differences.push(
          `${name}.${column}: nullability: the database has ${stored.notNull ? 'NOT NULL' : 'a nullable column'}, schema.ts ${declared.nullable ? 'allows null' : 'does not allow null'}`,
        );
      }
    }
  }
  return differences.sort();
}

/**
 * schema.ts with one drift of each kind, to show that the comparison sees them: a column the database lacks, one that
 * schema.ts lacks, a nullability and a type that differ, a relation renamed.
 */
function driftedSchemaTs(text: string): { text: string; expected: string[] } {
  const edit = (source: string, from: string | RegExp, to: (found: string) => string) => {
    const found = typeof from === 'string' ? (source.includes(from) ? from : undefined) : source.match(from)?.[0];
    if (found === undefined)
      throw new Error(`the drift probe no longer finds ${String(from)} in schema.ts: update driftedSchemaTs`);
    return source.replace(found, () => to(found));
  };
  const drifted = edit(text, /export interface FilesTable \{[\s\S]*?\n\}/, (table) => {
    let changed = edit(table, '{\n', (open) => `${open}  made_up_column: string;\n`);
    changed = edit(changed, '\n  name: string;', () => '\n  name: string | null;');
    changed = edit(changed, '\n  rows_total: number | null;', () => '\n  rows_total: string | null;');
    return edit(changed, '\n  error_code: string | null;', () => '');
  });
  return {
    text: edit(drifted, "'recon.rejected_rows': RejectedRowsTable;", () => "'recon.rejected_row': RejectedRowsTable;"),
    expected: [
      'recon.files.error_code: in the database (text), not in schema.ts',
      'recon.files.made_up_column: in schema.ts (string), not in the database',
      'recon.files.name: nullability: the database has NOT NULL, schema.ts allows null',
      'recon.files.rows_total: type: the database has integer (integer: a number), schema.ts has string | null',
      'recon.rejected_row: in schema.ts, not in the database',
      'recon.rejected_rows: a table in the database, not in schema.ts (type it, or list it in UNTYPED with the reason)',
    ],
  };
}

let typed: TypedSchema;
let drifted: { schema: TypedSchema; expected: string[] };

// The TypeScript side is the same for both backends: read once per file (about a second, most of it parsing kysely's
// and node's types, which the drifted copy's Program then shares).
beforeAll(() => {
  typed = readTypedSchema();
  const probe = driftedSchemaTs(ts.sys.readFile(SCHEMA_TS)!);
  drifted = { schema: readTypedSchema(probe.text), expected: probe.expected };
});

describe.each(BACKENDS)('src/db/schema.ts against the migrated database on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let stored: Map<string, DatabaseRelation>;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    stored = await readDatabaseSchema(testDb.database);
  });
  afterAll(async () => testDb?.drop());

  it.skipIf(skip)('agree on every relation, column, type family and nullability', () => {
    const differences = schemaDifferences(stored, typed);
    expect(
      differences,
      `src/db/schema.ts and the migrated database disagree:\n  ${differences.join('\n  ')}\n`,
    ).toEqual([]);
  });

  it.skipIf(skip)('would tell each kind of drift', () => {
    const before = new Set(schemaDifferences(stored, typed));
    expect(schemaDifferences(stored, drifted.schema).filter((line) => !before.has(line))).toEqual(drifted.expected);
  });
});
