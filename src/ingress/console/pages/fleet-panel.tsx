/**
 * Fleet mode's panel of the overview (admin): each node's waiting mail and the
 * fleet's total, as every node answered it; a node that did not answer is named,
 * never left out of the table silently.
 */
import type { FleetQueues, NodeQueue } from '../../../core/fleet/index.js';
import { DataTable } from './data-table.js';

function Row(props: { name: string; queue: NodeQueue }) {
  const { waiting, by_status: status } = props.queue;
  return (
    <tr>
      <th scope="row">{props.name}</th>
      <td class="num">{waiting}</td>
      <td class="num">{status.queued}</td>
      <td class="num">{status.deferred}</td>
      <td class="num">{status.sending}</td>
      <td class="num">{status.suspended}</td>
    </tr>
  );
}

export function FleetPanel(props: { fleet: FleetQueues }) {
  const nodes = Object.entries(props.fleet.nodes).sort(([a], [b]) => a.localeCompare(b));
  return (
    <section class="panel" aria-labelledby="fleet-heading">
      <h2 id="fleet-heading">Fleet</h2>
      <DataTable
        columns={[
          'Node',
          { label: 'Waiting', num: true },
          { label: 'Queued', num: true },
          { label: 'Deferred', num: true },
          { label: 'Sending', num: true },
          { label: 'Suspended', num: true },
        ]}
      >
        {nodes.map(([node, queue]) => (
          <Row name={node} queue={queue} />
        ))}
        <Row name="Fleet total" queue={props.fleet.total} />
      </DataTable>
      {props.fleet.missing_nodes.length === 0 ? null : (
        <p class="badge bad">{`Not answering (not in the total): ${props.fleet.missing_nodes.join(', ')}`}</p>
      )}
    </section>
  );
}
