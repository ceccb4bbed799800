// Generated with validators.generated.js; do not edit.
import type { ValidateFunction } from 'ajv';
export declare const schemaHash: string;
export declare const svcFile: ValidateFunction;
export declare const schemasFile: ValidateFunction;
export declare const familyFile: ValidateFunction;
