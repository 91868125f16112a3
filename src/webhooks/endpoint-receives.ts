/**
 * Whether an endpoint limited to `endpointProductIds` (null: every product) receives an event about the product
 * `eventProductId` (null: an event about no product, such as token.* or signing_key.*). The one product rule of
 * the fan-out (docs/webhooks.md, Product limits): a limited endpoint gets only its products' events, and events
 * about no product go only to endpoints for every product.
 */
export function endpointReceives(endpointProductIds: readonly number[] | null, eventProductId: number | null): boolean {
  if (endpointProductIds === null) return true;
  return eventProductId !== null && endpointProductIds.includes(eventProductId);
}
