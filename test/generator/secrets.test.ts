import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { secretPointers } from '../../generated/registry.ts';

// Bearer secrets are marked x-svc-secret: true in the contract; the mark is published in OpenAPI and
// the registry lists, per operation, where its result carries them.
describe('secrets marked in the contract', () => {
  it('lists the secret pointers of each secret-bearing operation result', () => {
    expect(secretPointers).toEqual({
      'files.download_url': ['/url'],
      'files.upload_url': ['/url'],
      'keys.create': ['/secret'],
      'keys.rotate': ['/secret'],
      'webhooks.endpoint.create': ['/secret'],
      'webhooks.endpoint.rotate_secret': ['/secret'],
    });
  });

  it('publishes the mark in the OpenAPI document', () => {
    const schemas = JSON.parse(readFileSync('generated/openapi.json', 'utf8')).components.schemas;
    expect(schemas.ApiKeyWithSecret.properties.secret['x-svc-secret']).toBe(true);
    expect(schemas.WebhookEndpointWithSecret.properties.secret['x-svc-secret']).toBe(true);
    expect(schemas.UploadUrl.properties.url['x-svc-secret']).toBe(true);
    expect(schemas.DownloadUrl.properties.url['x-svc-secret']).toBe(true);
    expect(schemas.ApiKey.properties.secret).toBeUndefined();
  });
});
