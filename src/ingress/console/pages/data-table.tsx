/**
 * The console's list table: a scrolling wrapper, an optional caption, one heading
 * row of column headers and the caller's rows. Every list page draws this shape.
 */
import type { Child } from 'hono/jsx';

/** A column header: its label, or `{ label, num: true }` for a right-aligned number column; null leaves it out. */
export type Column = string | { label: string; num: true } | null;

export function DataTable(props: { columns: readonly Column[]; caption?: string; children: Child }) {
  return (
    <div class="table-wrap">
      <table>
        {props.caption === undefined ? null : <caption class="muted">{props.caption}</caption>}
        <thead>
          <tr>
            {props.columns.map((column) =>
              column === null ? null : typeof column === 'string' ? (
                <th scope="col">{column}</th>
              ) : (
                <th scope="col" class="num">
                  {column.label}
                </th>
              ),
            )}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}
