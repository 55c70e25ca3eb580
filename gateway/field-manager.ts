/** The field manager of every API write the gateway makes (activity Leases, wake requests). */
export const GATEWAY_FIELD_MANAGER = 'settee-gateway';
