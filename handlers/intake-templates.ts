// Intake templates: the typed fields a record starts with. Kept in code (a decision: the contract
// has no template operations); a record keeps a copy of its template's field definitions, so a
// later change here never alters an existing record.
export type IntakeFieldType = 'text' | 'number' | 'date' | 'boolean' | 'choice' | 'file';

export interface IntakeFieldDef {
  key: string;
  label: string;
  type: IntakeFieldType;
  required: boolean;
  choices?: string[];
}

/** Intake templates by name: each field's key, label, type, whether it is required, and its choices. */
export type IntakeTemplates = Readonly<Record<string, readonly IntakeFieldDef[]>>;

export const INTAKE_TEMPLATES: IntakeTemplates = {
  benefits_onboarding: [
    { key: 'company_name', label: 'Company name', type: 'text', required: true },
    { key: 'employee_count', label: 'Employee count', type: 'number', required: true },
    { key: 'plan_start_date', label: 'Plan start date', type: 'date', required: true },
    { key: 'plan_type', label: 'Plan type', type: 'choice', required: true, choices: ['ppo', 'hmo', 'hdhp'] },
    { key: 'dental_included', label: 'Dental included', type: 'boolean', required: false },
    { key: 'contact_email', label: 'Contact email', type: 'text', required: false },
    { key: 'census_file', label: 'Census file', type: 'file', required: false },
  ],
  company_profile: [
    { key: 'legal_name', label: 'Legal name', type: 'text', required: true },
    { key: 'industry', label: 'Industry', type: 'text', required: false },
    { key: 'founded_on', label: 'Founded on', type: 'date', required: false },
    { key: 'website', label: 'Website', type: 'text', required: false },
  ],
};

/** Longest text value a field holds. */
export const INTAKE_TEXT_MAX = 10_000;
