import { isDeepStrictEqual } from 'node:util';

// The last touches to the OpenAPI document @fastify/swagger builds from the route schemas, for
// client generators (openapi-typescript and the like): named types, one operationId per operation,
// a body marked required only when it is. Pure: it only rewrites the object it is given.

type Node = Record<string, unknown>;

const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null && !Array.isArray(value);

const OPERATION_KEYS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

// Where JSON Schema 2020-12 (OpenAPI 3.1's dialect) keeps subschemas: one, a list, a map of them.
const SUBSCHEMA = [
  'items',
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
];
const SUBSCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const SUBSCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'dependentSchemas'];

/** What OpenAPI allows as a component name. */
const COMPONENT_NAME = /^[A-Za-z0-9._-]+$/;

/**
 * Replaces every schema that has a title (src/api/schemas.ts names them so) by a reference to
 * `#/components/schemas/<title>`, added there once. Two different schemas with one title are a
 * programming error: the document would lie about one of them.
 */
function nameSchema(schema: unknown, components: Node): unknown {
  if (!isNode(schema)) return schema;
  for (const key of SUBSCHEMA) if (key in schema) schema[key] = nameSchema(schema[key], components);
  for (const key of SUBSCHEMA_LISTS) {
    const list = schema[key];
    if (Array.isArray(list)) schema[key] = list.map((item) => nameSchema(item, components));
  }
  for (const key of SUBSCHEMA_MAPS) {
    const map = schema[key];
    if (isNode(map)) for (const name of Object.keys(map)) map[name] = nameSchema(map[name], components);
  }
  const title = schema.title;
  if (typeof title !== 'string') return schema;
  if (!COMPONENT_NAME.test(title))
    throw new Error(`schema title ${JSON.stringify(title)} is not a valid component name`);
  const known = components[title];
  if (known === undefined) components[title] = schema;
  else if (!isDeepStrictEqual(known, schema)) throw new Error(`two different schemas are titled ${title}`);
  return { $ref: `#/components/schemas/${title}` };
}

/** The schemas of one operation: parameters, request body, response bodies and headers. */
function nameOperationSchemas(operation: Node, components: Node): void {
  const withSchema = (holder: unknown) => {
    if (isNode(holder) && 'schema' in holder) holder.schema = nameSchema(holder.schema, components);
  };
  if (Array.isArray(operation.parameters)) operation.parameters.forEach(withSchema);
  const body = operation.requestBody;
  if (isNode(body) && isNode(body.content)) Object.values(body.content).forEach(withSchema);
  if (!isNode(operation.responses)) return;
  for (const response of Object.values(operation.responses)) {
    if (!isNode(response)) continue;
    if (isNode(response.content)) Object.values(response.content).forEach(withSchema);
    if (isNode(response.headers)) Object.values(response.headers).forEach(withSchema);
  }
}

/**
 * A route declared for GET and HEAD together appears as two operations sharing one object, so one
 * operationId: the HEAD one becomes `<id>Head`, and its responses lose their bodies (a HEAD answer
 * has none, RFC 9110 §9.3.2).
 */
function separateHead(pathItem: Node): void {
  const get = pathItem.get;
  const head = pathItem.head;
  if (!isNode(get) || !isNode(head) || typeof get.operationId !== 'string' || head.operationId !== get.operationId)
    return;
  const copy = structuredClone(head);
  copy.operationId = `${get.operationId}Head`;
  if (isNode(copy.responses))
    for (const response of Object.values(copy.responses)) if (isNode(response)) delete response.content;
  pathItem.head = copy;
}

/**
 * @fastify/swagger marks every declared body required, but the API reads a request without a body
 * as {} (src/api/server.ts, validatorCompiler): a JSON body that requires no field may be left out.
 */
function optionalEmptyBody(operation: Node): void {
  const body = operation.requestBody;
  if (!isNode(body) || !isNode(body.content)) return;
  const json = body.content['application/json'];
  const schema = isNode(json) ? json.schema : undefined;
  if (!isNode(schema) || schema.type !== 'object') return;
  const required = schema.required;
  if (required === undefined || (Array.isArray(required) && required.length === 0)) body.required = false;
}

/** Finishes the document in place (and returns it): for @fastify/swagger's transformObject. */
export function finishOpenApiDocument<T extends object>(document: T): T {
  const doc = document as Node;
  if (!isNode(doc.components)) doc.components = {};
  const components = doc.components as Node;
  if (!isNode(components.schemas)) components.schemas = {};
  const schemas = components.schemas as Node;
  if (!isNode(doc.paths)) return document;
  for (const pathItem of Object.values(doc.paths)) {
    if (!isNode(pathItem)) continue;
    separateHead(pathItem);
    for (const key of OPERATION_KEYS) {
      const operation = pathItem[key];
      if (!isNode(operation)) continue;
      optionalEmptyBody(operation);
      nameOperationSchemas(operation, schemas);
    }
  }
  return document;
}
