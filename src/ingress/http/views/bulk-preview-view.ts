/** A bulk action's dry run as POST /commands/bulk answers it: its sample in the API's snake_case. */
import type { BulkPreview } from '../../../core/message/index.js';

export type BulkPreviewView = Omit<BulkPreview, 'sample'> & { sample: Array<{ tenant_id: string; id: string }> };

export const viewBulkPreview = (preview: BulkPreview): BulkPreviewView => ({
  ...preview,
  sample: preview.sample.map((m) => ({ tenant_id: m.tenantId, id: m.clientId })),
});
