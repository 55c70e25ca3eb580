import { Ajv, type ErrorObject } from 'ajv';
import { findRuleViolations } from '../../../api/couch-instance-rules.js';
import { COUCH_INSTANCE_SPEC_SCHEMA } from '../../../api/couch-instance-schema.js';
import type { CouchInstanceSpec } from '../../../api/couch-instance.js';
import type { FreeEnvelope } from '../../../api/free-envelope.js';

const validateSchema = new Ajv({ allErrors: true, strict: true }).compile<CouchInstanceSpec>(
  COUCH_INSTANCE_SPEC_SCHEMA,
);

function describe(error: ErrorObject): string {
  const path = error.instancePath.split('/').filter(Boolean).join('.');
  return `${path ? `spec.${path}` : 'spec'} ${error.message ?? 'is invalid'}`;
}

/**
 * Checks a spec again in the operator: against the CRD's own schema (ajv), then against the CEL
 * rules' TypeScript twins with the operator's configured envelope. The API server has normally
 * rejected all of this already; what remains are objects stored under an older CRD, or an
 * envelope configured narrower than the CRD's. Returns one message per problem.
 */
export function findSpecViolations(spec: unknown, envelope: FreeEnvelope): string[] {
  if (!validateSchema(spec)) return (validateSchema.errors ?? []).map(describe);
  return findRuleViolations(spec, envelope);
}
