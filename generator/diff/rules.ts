// `svc diff` rules: every classification the comparison can report (the spec's Versioning rules),
// and the shape of a finding. engine.ts finds them; command.ts decides what each requires.
export interface Finding {
  kind: 'breaking' | 'additive';
  /** Rule id, e.g. input-field-required. */
  rule: string;
  /** Operation id, schema name, or the svc.yaml entry concerned. */
  subject: string;
  message: string;
  /** `file:line:col` in the head contract (the base's for removals). */
  location: string;
}

/** Every rule, its classification and what it means. */
export const RULES: Record<string, { kind: Finding['kind']; what: string }> = {
  'operation-added': { kind: 'additive', what: 'a new operation' },
  'input-field-added': { kind: 'additive', what: 'a new optional input field' },
  'output-field-added': { kind: 'additive', what: 'a new output field' },
  'enum-value-added': { kind: 'additive', what: 'a new value in an open enumeration' },
  'event-type-added': { kind: 'additive', what: 'a new webhook event type' },
  'scope-added': { kind: 'additive', what: 'a new scope' },
  'mcp-tool-added': { kind: 'additive', what: 'an existing operation newly exposed as an MCP tool' },
  'mcp-meta-tool-added': { kind: 'additive', what: 'a new meta-tool of the dynamic MCP mode (svc.yaml mcpDynamic)' },
  'audience-widened': { kind: 'additive', what: 'a principal kind newly allowed to call an operation' },
  'event-emission-added': { kind: 'additive', what: 'an operation newly emits an event type' },
  'operation-deprecated': { kind: 'additive', what: 'an operation newly deprecated (or its deprecation changed)' },
  'version-deprecated': { kind: 'additive', what: 'a path version newly deprecated (or its sunset changed)' },
  'operation-withdrawn': { kind: 'additive', what: 'a deprecated operation removed after its sunset' },
  'problem-code-added': { kind: 'additive', what: 'a new problem code in svc.yaml' },

  'operation-removed': { kind: 'breaking', what: 'an operation removed' },
  'operation-renamed': { kind: 'breaking', what: 'an operation renamed (same method and path, new id)' },
  'operation-kind-changed': { kind: 'breaking', what: 'a read became a command or back' },
  'input-field-removed': { kind: 'breaking', what: 'an input field removed' },
  'output-field-removed': { kind: 'breaking', what: 'an output field removed' },
  'output-field-optional': { kind: 'breaking', what: 'an output field no longer always present' },
  'output-type-changed': { kind: 'breaking', what: 'an output value may now have a type or shape it could not have' },
  'input-field-required': { kind: 'breaking', what: 'an optional input field made required' },
  'required-input-added': { kind: 'breaking', what: 'a new required input field' },
  'input-length-narrowed': { kind: 'breaking', what: 'a narrower minLength/maxLength on an input' },
  'input-range-narrowed': { kind: 'breaking', what: 'a narrower minimum/maximum/multipleOf on an input' },
  'input-items-narrowed': { kind: 'breaking', what: 'narrower minItems/maxItems/uniqueItems/min-/maxProperties on an input' },
  'input-pattern-narrowed': { kind: 'breaking', what: 'a new or changed pattern on an input' },
  'input-format-narrowed': { kind: 'breaking', what: 'a new or changed format on an input' },
  'input-type-narrowed': { kind: 'breaking', what: 'a type, oneOf or anyOf option removed from an input' },
  'input-enum-narrowed': { kind: 'breaking', what: 'an input newly limited to an enumeration or constant' },
  'additional-properties-tightened': { kind: 'breaking', what: 'an input object accepts fewer additional properties' },
  'enum-value-removed': { kind: 'breaking', what: 'a value removed from an enumeration' },
  'closed-enum-changed': { kind: 'breaking', what: 'any value change in a closed enumeration' },
  'enum-openness-changed': { kind: 'breaking', what: 'an enumeration switched between open and closed' },
  'scope-removed': { kind: 'breaking', what: 'a scope removed' },
  'mcp-tool-prefix-changed': { kind: 'breaking', what: "svc.yaml mcpToolPrefix changed: every MCP tool's name changes" },
  'api-version-header-changed': { kind: 'breaking', what: 'svc.yaml apiVersionHeader changed: the response header clients read is renamed' },
  'personal-data-scope-changed': { kind: 'breaking', what: 'svc.yaml personalData.scope added, changed or removed: credentials without the new scope lose personal data, or every caller gains it' },
  'feature-changed': { kind: 'breaking', what: 'svc.yaml features.clientTenancy or features.approvals turned on or off: who may call, what a credential reaches, or what a command answers changes' },
  'event-type-removed': { kind: 'breaking', what: 'a webhook event type removed' },
  'event-emission-removed': { kind: 'breaking', what: 'an operation no longer emits an event type' },
  'success-status-changed': { kind: 'breaking', what: 'a changed success status' },
  'problem-code-removed': { kind: 'breaking', what: 'a problem code removed (from an operation or svc.yaml)' },
  'operation-problem-added': { kind: 'breaking', what: 'an operation declares a problem code it could not answer before' },
  'problem-status-changed': { kind: 'breaking', what: "a problem code's status or retry class changed" },
  'http-method-changed': { kind: 'breaking', what: 'a changed HTTP method' },
  'http-path-changed': { kind: 'breaking', what: 'a changed HTTP path' },
  'operation-scope-changed': { kind: 'breaking', what: "a changed operation's scope" },
  'operation-tier-changed': { kind: 'breaking', what: "a changed command's tier" },
  'audience-narrowed': { kind: 'breaking', what: 'a principal kind no longer allowed to call an operation' },
  'idempotency-required': { kind: 'breaking', what: 'an Idempotency-Key newly required' },
  'if-match-required': { kind: 'breaking', what: 'If-Match newly required' },
  'paging-changed': { kind: 'breaking', what: 'a read became paged or unpaged, or its stream changed' },
  'mcp-tool-removed': { kind: 'breaking', what: 'an MCP tool removed' },
  'mcp-tool-renamed': { kind: 'breaking', what: "an MCP tool's name changed" },
  'mcp-input-narrowed': { kind: 'breaking', what: "an MCP tool's input lost an argument" },
  'mcp-annotations-changed': { kind: 'breaking', what: "an MCP tool's annotations changed" },
  'mcp-meta-tool-removed': { kind: 'breaking', what: 'a meta-tool of the dynamic MCP mode removed (or renamed)' },
  'mcp-meta-tool-role-changed': { kind: 'breaking', what: "a meta-tool's role (what it does) changed" },
};
