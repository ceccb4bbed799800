// The document reader and the scan verdict without a server: CSV quoting, the two CSV layouts,
// label lines, type coercion (with the confidence it costs), unreadable types, and the scan rules.
import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { extractValues, parseCsv, UnreadableDocument, type ExtractFieldDef, type ProposedValue } from '../../runtime/files/extract.ts';
import { checkSignature, signUrl } from '../../runtime/files/signing.ts';
import { scanVerdict } from '../../runtime/files/worker.ts';
import { makePdf } from '../support/pdf.ts';

const FIELDS: ExtractFieldDef[] = [
  { key: 'company_name', label: 'Company name', type: 'text' },
  { key: 'employee_count', label: 'Headcount', type: 'number' },
  { key: 'start', label: 'Plan start date', type: 'date' },
  { key: 'plan_type', label: 'Plan type', type: 'choice', choices: ['ppo', 'hmo'] },
  { key: 'dental', label: 'Dental included', type: 'boolean' },
  { key: 'census', label: 'Census', type: 'file' },
];

const byKey = (values: ProposedValue[]): Record<string, ProposedValue> => Object.fromEntries(values.map((v) => [v.key, v]));

describe('parseCsv', () => {
  it('reads quoted cells, doubled quotes, embedded commas and newlines, CRLF, and skips blank rows', () => {
    expect(parseCsv('a,"b, c","say ""hi"""\r\n\r\n"multi\nline",2\n')).toEqual([
      ['a', 'b, c', 'say "hi"'],
      ['multi\nline', '2'],
    ]);
    expect(parseCsv('x,y')).toEqual([['x', 'y']]);
    expect(parseCsv('')).toEqual([]);
  });
});

describe('extractValues', () => {
  it('CSV with a header row of labels over a row of values', async () => {
    const v = byKey(await extractValues(Buffer.from('Company name,Headcount,Plan type\nAcme,"2,000",PPO\n'), 'text/csv', FIELDS));
    expect(v.company_name).toEqual({ key: 'company_name', value: 'Acme', confidence: 0.95, page: null });
    expect(v.employee_count).toMatchObject({ value: 2000, confidence: 0.76 });
    expect(v.plan_type).toMatchObject({ value: 'ppo', confidence: 0.76 });
  });

  it('CSV as label,value rows; values that do not fit their type are left out', async () => {
    const csv = 'Field,Value\ncompany_name,Acme\nHeadcount,lots\nPlan start date,02/30/2027\nDental included,No\nCensus,fil_x\n';
    const v = byKey(await extractValues(Buffer.from(csv), 'text/csv; charset=utf-8', FIELDS));
    expect(Object.keys(v).sort()).toEqual(['company_name', 'dental']);
    expect(v.dental).toMatchObject({ value: false, confidence: 0.76 });
  });

  it('plain text label lines with :, = or a tab; the first match of a field wins; dates in three forms', async () => {
    const text = 'Company name: Acme\ncompany name: Later\nPlan start date = Jan 5, 2027\nplan_type\thmo\n';
    const v = byKey(await extractValues(Buffer.from(text), 'text/plain', FIELDS));
    expect(v.company_name.value).toBe('Acme');
    expect(v.start).toMatchObject({ value: '2027-01-05', confidence: 0.76 });
    expect(v.plan_type).toMatchObject({ value: 'hmo', confidence: 0.95 });
    const iso = byKey(await extractValues(Buffer.from('Plan start date: 2027-02-28'), 'text/plain', FIELDS));
    expect(iso.start).toMatchObject({ value: '2027-02-28', confidence: 0.95 });
    const us = byKey(await extractValues(Buffer.from('Plan start date: 2/3/2027'), 'text/plain', FIELDS));
    expect(us.start.value).toBe('2027-02-03');
  });

  it('PDF text per page, with the page recorded', async () => {
    const pdf = makePdf([['Company name: Paged'], ['Headcount: 7']]);
    const v = byKey(await extractValues(pdf, 'application/pdf', FIELDS));
    expect(v.company_name).toMatchObject({ value: 'Paged', page: 1 });
    expect(v.employee_count).toMatchObject({ value: 7, page: 2 });
  });

  it('an unreadable type or a broken PDF is an UnreadableDocument', async () => {
    await expect(extractValues(Buffer.from('x'), 'image/png', FIELDS)).rejects.toBeInstanceOf(UnreadableDocument);
    await expect(extractValues(Buffer.from('%PDF-1.4 broken'), 'application/pdf', FIELDS)).rejects.toBeInstanceOf(UnreadableDocument);
  });
});

describe('scanVerdict', () => {
  const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
  it('passes clean bytes; rejects a changed hash, the EICAR signature and a fake PDF', () => {
    const ok = Buffer.from('hello');
    expect(scanVerdict(ok, { sha256: sha(ok), contentType: 'text/plain' })).toBeNull();
    expect(scanVerdict(ok, { sha256: sha(Buffer.from('other')), contentType: 'text/plain' })).toContain('sha256');
    const eicar = Buffer.from('X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*');
    expect(scanVerdict(eicar, { sha256: sha(eicar), contentType: 'text/plain' })).toContain('EICAR');
    const fake = Buffer.from('no');
    expect(scanVerdict(fake, { sha256: sha(fake), contentType: 'application/pdf' })).toContain('not a PDF');
    const pdf = makePdf([['x']]);
    expect(scanVerdict(pdf, { sha256: sha(pdf), contentType: 'application/pdf' })).toBeNull();
  });
});

describe('signed URLs', () => {
  it('verifies its own signature; any change to path, expiry or size limit, or a past expiry, is refused', () => {
    const at = new Date('2030-01-01T00:00:00Z');
    const url = new URL(signUrl('s3cret', 'http://svc.test', 'PUT', '/uploads/upl_a', at, 10));
    const now = new Date('2029-12-31T23:59:00Z');
    expect(checkSignature('s3cret', 'PUT', '/uploads/upl_a', url.searchParams, 10, now)).toBe('ok');
    expect(checkSignature('s3cret', 'PUT', '/uploads/upl_b', url.searchParams, 10, now)).toBe('invalid');
    expect(checkSignature('s3cret', 'GET', '/uploads/upl_a', url.searchParams, 10, now)).toBe('invalid');
    expect(checkSignature('s3cret', 'PUT', '/uploads/upl_a', url.searchParams, 11, now)).toBe('invalid');
    expect(checkSignature('other', 'PUT', '/uploads/upl_a', url.searchParams, 10, now)).toBe('invalid');
    const later = new URLSearchParams(url.searchParams);
    later.set('expires', String(Number(later.get('expires')) + 60));
    expect(checkSignature('s3cret', 'PUT', '/uploads/upl_a', later, 10, now)).toBe('invalid');
    expect(checkSignature('s3cret', 'PUT', '/uploads/upl_a', url.searchParams, 10, new Date('2030-01-01T00:00:01Z'))).toBe('expired');
    expect(checkSignature('s3cret', 'PUT', '/uploads/upl_a', new URLSearchParams('expires=abc&signature=x'), 10, now)).toBe('invalid');
    expect([...url.searchParams.keys()]).not.toContain('token');
    expect([...url.searchParams.keys()]).not.toContain('key');
  });
});
