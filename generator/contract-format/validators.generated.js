// Generated from generator/contract-format/contract.schema.json by generator/contract-format/build.ts; do not edit.
// Rebuild: node --import tsx generator/contract-format/build.ts --write
/* eslint-disable */
import { createRequire } from "node:module";
const require = createRequire(import.meta.url);
export const schemaHash = "4753ed87c8877028";

export const svcFile = validate21;
const schema32 = {"title":"contract/svc.yaml","description":"Service-wide facts.","type":"object","required":["info","totals"],"additionalProperties":false,"properties":{"info":{"$ref":"#/$defs/info","x-missing":"info: {title: ..., version: 1.0.0}"},"totals":{"$ref":"#/$defs/totals","x-missing":"totals: {operations, reads, commands, families, tools, scopes, eventTypes} (the counts the contract must have)"},"mcpProtocolVersions":{"description":"MCP protocol versions /mcp serves, newest first.","type":"array","items":{"type":"string","pattern":"^\\d{4}-\\d{2}-\\d{2}$","x-expect":"an MCP protocol version (YYYY-MM-DD)"},"uniqueItems":true},"mcpDynamic":{"$ref":"#/$defs/mcpDynamic"},"mcpToolPrefix":{"description":"The first segment of every operation tool's name, <prefix>.<operation id> (default svc: svc.tasks.create).","type":"string","pattern":"^[A-Za-z][A-Za-z0-9_-]{0,31}$","x-expect":"a tool name prefix: a letter, then up to 31 letters, digits, _ or - (no dot)","x-fix":"Write e.g. mcpToolPrefix: acme."},"guideExamples":{"description":"Which operations the generated REST guide shows (default: the first list read and the first creating POST, its body built from its input schema): list, a paged GET read; create, a POST command; body, the create example's JSON body.","type":"object","additionalProperties":false,"properties":{"list":{"type":"string","x-expect":"the id of a paged GET read","x-fix":"Write e.g. list: items.list."},"create":{"type":"string","x-expect":"the id of a POST command","x-fix":"Write e.g. create: items.create."},"body":{"type":"object","x-fix":"Write the create example's body as a mapping."},"decision":{"$ref":"#/$defs/decision"}}},"personalData":{"description":"The scope that unlocks personal data (what a handler passes through Policy.redactPersonalData): without it the runtime redacts it. Absent: no scope gates personal data; fields marked x-svc-personal still stay out of logs.","type":"object","additionalProperties":false,"required":["scope"],"properties":{"scope":{"type":"string","x-expect":"a scope declared under scopes:","x-fix":"Name a scope declared under scopes: (e.g. pii:read)."},"decision":{"$ref":"#/$defs/decision"}}},"features":{"description":"Machinery only some APIs want, turned on by the contract (both off when absent): clientTenancy (records and credentials bound to client organisations: the client_admin and service_account principals, client reach in visibility) and approvals (Tier 2 and 3 commands become proposals a person approves).","type":"object","additionalProperties":false,"properties":{"clientTenancy":{"type":"boolean","x-fix":"Write clientTenancy: true or false."},"approvals":{"type":"boolean","x-fix":"Write approvals: true or false."},"decision":{"$ref":"#/$defs/decision"}}},"apiVersionHeader":{"description":"The response header every answer carries the API version (major.minor) in (default X-Svc-Api-Version).","type":"string","pattern":"^[A-Za-z][A-Za-z0-9-]{0,63}$","x-expect":"an HTTP header name: a letter, then letters, digits and -","x-fix":"Write e.g. apiVersionHeader: X-Acme-Api-Version."},"versions":{"type":"array","items":{"$ref":"#/$defs/version"}},"scopes":{"description":"Scopes, in canonical order.","type":"array","items":{"$ref":"#/$defs/named"}},"principals":{"description":"Caller kinds an operation's audience names: operator, client_admin or service_account (the kinds the runtime authenticates).","type":"array","items":{"$ref":"#/$defs/named"}},"roles":{"description":"Role labels and the scopes each allows.","type":"object","additionalProperties":{"$ref":"#/$defs/role"}},"problems":{"description":"Problem codes: code -> {status, title, retry}. The codes the runtime raises are built in; declaring one replaces it.","type":"object","propertyNames":{"pattern":"^[a-z][a-z0-9_]*$","x-expect":"a problem code in lower snake_case","x-fix":"Rename it, e.g. not_found."},"additionalProperties":{"$ref":"#/$defs/problem"}},"eventTypes":{"description":"Webhook event types.","type":"array","items":{"$ref":"#/$defs/named"}},"limits":{"description":"Named numbers (any name), plus one decision note. The limits the runtime reads are built in; declaring one replaces its value.","type":"object","properties":{"decision":{"$ref":"#/$defs/decision"}},"additionalProperties":{"type":"number","x-fix":"A limit is a number."}},"changelog":{"description":"Release notes, newest first.","type":"array","items":{"$ref":"#/$defs/changelogEntry"}}}};
const schema36 = {"description":"A choice the spec leaves open, recorded beside what it governs; published as x-svc-decision and in the docs.","type":"string"};
const func1 = Object.prototype.hasOwnProperty;
const schema33 = {"type":"object","required":["title","version"],"additionalProperties":false,"properties":{"title":{"type":"string","x-missing":"title: <the API's name>"},"version":{"$ref":"#/$defs/semver","x-missing":"version: <the contract version, e.g. 1.0.0>"},"description":{"type":"string"},"releaseDate":{"$ref":"#/$defs/date"},"decision":{"$ref":"#/$defs/decision"}}};
const schema34 = {"type":"string","pattern":"^\\d+\\.\\d+\\.\\d+$","x-expect":"a version MAJOR.MINOR.PATCH","x-fix":"Write it like 1.2.0."};
const schema35 = {"type":"string","format":"date","x-fix":"Write a quoted date such as \"2026-12-01\"."};
const pattern4 = new RegExp("^\\d+\\.\\d+\\.\\d+$", "u");
const formats0 = require("ajv-formats/dist/formats").fullFormats.date;

function validate22(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){
let vErrors = null;
let errors = 0;
const evaluated0 = validate22.evaluated;
if(evaluated0.dynamicProps){
evaluated0.props = undefined;
}
if(evaluated0.dynamicItems){
evaluated0.items = undefined;
}
if(data && typeof data == "object" && !Array.isArray(data)){
if(data.title === undefined){
const err0 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "title"},message:"must have required property '"+"title"+"'",schema:schema33.required,parentSchema:schema33,data};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
if(data.version === undefined){
const err1 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "version"},message:"must have required property '"+"version"+"'",schema:schema33.required,parentSchema:schema33,data};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
for(const key0 in data){
if(!(((((key0 === "title") || (key0 === "version")) || (key0 === "description")) || (key0 === "releaseDate")) || (key0 === "decision"))){
const err2 = {instancePath,schemaPath:"#/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties",schema:false,parentSchema:schema33,data};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
}
}
if(data.title !== undefined){
let data0 = data.title;
if(typeof data0 !== "string"){
const err3 = {instancePath:instancePath+"/title",schemaPath:"#/properties/title/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema33.properties.title.type,parentSchema:schema33.properties.title,data:data0};
if(vErrors === null){
vErrors = [err3];
}
else {
vErrors.push(err3);
}
errors++;
}
}
if(data.version !== undefined){
let data1 = data.version;
if(typeof data1 === "string"){
if(!pattern4.test(data1)){
const err4 = {instancePath:instancePath+"/version",schemaPath:"#/$defs/semver/pattern",keyword:"pattern",params:{pattern: "^\\d+\\.\\d+\\.\\d+$"},message:"must match pattern \""+"^\\d+\\.\\d+\\.\\d+$"+"\"",schema:"^\\d+\\.\\d+\\.\\d+$",parentSchema:schema34,data:data1};
if(vErrors === null){
vErrors = [err4];
}
else {
vErrors.push(err4);
}
errors++;
}
}
else {
const err5 = {instancePath:instancePath+"/version",schemaPath:"#/$defs/semver/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema34.type,parentSchema:schema34,data:data1};
if(vErrors === null){
vErrors = [err5];
}
else {
vErrors.push(err5);
}
errors++;
}
}
if(data.description !== undefined){
let data2 = data.description;
if(typeof data2 !== "string"){
const err6 = {instancePath:instancePath+"/description",schemaPath:"#/properties/description/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema33.properties.description.type,parentSchema:schema33.properties.description,data:data2};
if(vErrors === null){
vErrors = [err6];
}
else {
vErrors.push(err6);
}
errors++;
}
}
if(data.releaseDate !== undefined){
let data3 = data.releaseDate;
if(typeof data3 === "string"){
if(!(formats0.validate(data3))){
const err7 = {instancePath:instancePath+"/releaseDate",schemaPath:"#/$defs/date/format",keyword:"format",params:{format: "date"},message:"must match format \""+"date"+"\"",schema:"date",parentSchema:schema35,data:data3};
if(vErrors === null){
vErrors = [err7];
}
else {
vErrors.push(err7);
}
errors++;
}
}
else {
const err8 = {instancePath:instancePath+"/releaseDate",schemaPath:"#/$defs/date/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema35.type,parentSchema:schema35,data:data3};
if(vErrors === null){
vErrors = [err8];
}
else {
vErrors.push(err8);
}
errors++;
}
}
if(data.decision !== undefined){
let data4 = data.decision;
if(typeof data4 !== "string"){
const err9 = {instancePath:instancePath+"/decision",schemaPath:"#/$defs/decision/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema36.type,parentSchema:schema36,data:data4};
if(vErrors === null){
vErrors = [err9];
}
else {
vErrors.push(err9);
}
errors++;
}
}
}
else {
const err10 = {instancePath,schemaPath:"#/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema33.type,parentSchema:schema33,data};
if(vErrors === null){
vErrors = [err10];
}
else {
vErrors.push(err10);
}
errors++;
}
validate22.errors = vErrors;
return errors === 0;
}
validate22.evaluated = {"props":true,"dynamicProps":false,"dynamicItems":false};

const schema37 = {"description":"The counts the contract must have; svc generate refuses a contract whose counts differ. The spec binds 82/43/39/23/54/32/10 for this contract; another contract declares its own.","type":"object","required":["operations","reads","commands","families","tools","scopes","eventTypes"],"additionalProperties":false,"properties":{"operations":{"$ref":"#/$defs/count","x-missing":"operations: <how many operations the contract has>"},"reads":{"$ref":"#/$defs/count","x-missing":"reads: <how many operations are reads>"},"commands":{"$ref":"#/$defs/count","x-missing":"commands: <how many operations are commands>"},"families":{"$ref":"#/$defs/count","x-missing":"families: <how many families>"},"tools":{"$ref":"#/$defs/count","x-missing":"tools: <how many operations are MCP tools>"},"scopes":{"$ref":"#/$defs/count","x-missing":"scopes: <how many scopes>"},"eventTypes":{"$ref":"#/$defs/count","x-missing":"eventTypes: <how many event types>"}}};
const schema38 = {"type":"integer","minimum":0};

function validate24(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){
let vErrors = null;
let errors = 0;
const evaluated0 = validate24.evaluated;
if(evaluated0.dynamicProps){
evaluated0.props = undefined;
}
if(evaluated0.dynamicItems){
evaluated0.items = undefined;
}
if(data && typeof data == "object" && !Array.isArray(data)){
if(data.operations === undefined){
const err0 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "operations"},message:"must have required property '"+"operations"+"'",schema:schema37.required,parentSchema:schema37,data};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
if(data.reads === undefined){
const err1 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "reads"},message:"must have required property '"+"reads"+"'",schema:schema37.required,parentSchema:schema37,data};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
if(data.commands === undefined){
const err2 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "commands"},message:"must have required property '"+"commands"+"'",schema:schema37.required,parentSchema:schema37,data};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
}
if(data.families === undefined){
const err3 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "families"},message:"must have required property '"+"families"+"'",schema:schema37.required,parentSchema:schema37,data};
if(vErrors === null){
vErrors = [err3];
}
else {
vErrors.push(err3);
}
errors++;
}
if(data.tools === undefined){
const err4 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "tools"},message:"must have required property '"+"tools"+"'",schema:schema37.required,parentSchema:schema37,data};
if(vErrors === null){
vErrors = [err4];
}
else {
vErrors.push(err4);
}
errors++;
}
if(data.scopes === undefined){
const err5 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "scopes"},message:"must have required property '"+"scopes"+"'",schema:schema37.required,parentSchema:schema37,data};
if(vErrors === null){
vErrors = [err5];
}
else {
vErrors.push(err5);
}
errors++;
}
if(data.eventTypes === undefined){
const err6 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "eventTypes"},message:"must have required property '"+"eventTypes"+"'",schema:schema37.required,parentSchema:schema37,data};
if(vErrors === null){
vErrors = [err6];
}
else {
vErrors.push(err6);
}
errors++;
}
for(const key0 in data){
if(!(((((((key0 === "operations") || (key0 === "reads")) || (key0 === "commands")) || (key0 === "families")) || (key0 === "tools")) || (key0 === "scopes")) || (key0 === "eventTypes"))){
const err7 = {instancePath,schemaPath:"#/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties",schema:false,parentSchema:schema37,data};
if(vErrors === null){
vErrors = [err7];
}
else {
vErrors.push(err7);
}
errors++;
}
}
if(data.operations !== undefined){
let data0 = data.operations;
if(!((typeof data0 == "number") && (!(data0 % 1) && !isNaN(data0)))){
const err8 = {instancePath:instancePath+"/operations",schemaPath:"#/$defs/count/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema38.type,parentSchema:schema38,data:data0};
if(vErrors === null){
vErrors = [err8];
}
else {
vErrors.push(err8);
}
errors++;
}
if(typeof data0 == "number"){
if(data0 < 0 || isNaN(data0)){
const err9 = {instancePath:instancePath+"/operations",schemaPath:"#/$defs/count/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0",schema:0,parentSchema:schema38,data:data0};
if(vErrors === null){
vErrors = [err9];
}
else {
vErrors.push(err9);
}
errors++;
}
}
}
if(data.reads !== undefined){
let data1 = data.reads;
if(!((typeof data1 == "number") && (!(data1 % 1) && !isNaN(data1)))){
const err10 = {instancePath:instancePath+"/reads",schemaPath:"#/$defs/count/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema38.type,parentSchema:schema38,data:data1};
if(vErrors === null){
vErrors = [err10];
}
else {
vErrors.push(err10);
}
errors++;
}
if(typeof data1 == "number"){
if(data1 < 0 || isNaN(data1)){
const err11 = {instancePath:instancePath+"/reads",schemaPath:"#/$defs/count/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0",schema:0,parentSchema:schema38,data:data1};
if(vErrors === null){
vErrors = [err11];
}
else {
vErrors.push(err11);
}
errors++;
}
}
}
if(data.commands !== undefined){
let data2 = data.commands;
if(!((typeof data2 == "number") && (!(data2 % 1) && !isNaN(data2)))){
const err12 = {instancePath:instancePath+"/commands",schemaPath:"#/$defs/count/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema38.type,parentSchema:schema38,data:data2};
if(vErrors === null){
vErrors = [err12];
}
else {
vErrors.push(err12);
}
errors++;
}
if(typeof data2 == "number"){
if(data2 < 0 || isNaN(data2)){
const err13 = {instancePath:instancePath+"/commands",schemaPath:"#/$defs/count/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0",schema:0,parentSchema:schema38,data:data2};
if(vErrors === null){
vErrors = [err13];
}
else {
vErrors.push(err13);
}
errors++;
}
}
}
if(data.families !== undefined){
let data3 = data.families;
if(!((typeof data3 == "number") && (!(data3 % 1) && !isNaN(data3)))){
const err14 = {instancePath:instancePath+"/families",schemaPath:"#/$defs/count/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema38.type,parentSchema:schema38,data:data3};
if(vErrors === null){
vErrors = [err14];
}
else {
vErrors.push(err14);
}
errors++;
}
if(typeof data3 == "number"){
if(data3 < 0 || isNaN(data3)){
const err15 = {instancePath:instancePath+"/families",schemaPath:"#/$defs/count/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0",schema:0,parentSchema:schema38,data:data3};
if(vErrors === null){
vErrors = [err15];
}
else {
vErrors.push(err15);
}
errors++;
}
}
}
if(data.tools !== undefined){
let data4 = data.tools;
if(!((typeof data4 == "number") && (!(data4 % 1) && !isNaN(data4)))){
const err16 = {instancePath:instancePath+"/tools",schemaPath:"#/$defs/count/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema38.type,parentSchema:schema38,data:data4};
if(vErrors === null){
vErrors = [err16];
}
else {
vErrors.push(err16);
}
errors++;
}
if(typeof data4 == "number"){
if(data4 < 0 || isNaN(data4)){
const err17 = {instancePath:instancePath+"/tools",schemaPath:"#/$defs/count/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0",schema:0,parentSchema:schema38,data:data4};
if(vErrors === null){
vErrors = [err17];
}
else {
vErrors.push(err17);
}
errors++;
}
}
}
if(data.scopes !== undefined){
let data5 = data.scopes;
if(!((typeof data5 == "number") && (!(data5 % 1) && !isNaN(data5)))){
const err18 = {instancePath:instancePath+"/scopes",schemaPath:"#/$defs/count/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema38.type,parentSchema:schema38,data:data5};
if(vErrors === null){
vErrors = [err18];
}
else {
vErrors.push(err18);
}
errors++;
}
if(typeof data5 == "number"){
if(data5 < 0 || isNaN(data5)){
const err19 = {instancePath:instancePath+"/scopes",schemaPath:"#/$defs/count/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0",schema:0,parentSchema:schema38,data:data5};
if(vErrors === null){
vErrors = [err19];
}
else {
vErrors.push(err19);
}
errors++;
}
}
}
if(data.eventTypes !== undefined){
let data6 = data.eventTypes;
if(!((typeof data6 == "number") && (!(data6 % 1) && !isNaN(data6)))){
const err20 = {instancePath:instancePath+"/eventTypes",schemaPath:"#/$defs/count/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema38.type,parentSchema:schema38,data:data6};
if(vErrors === null){
vErrors = [err20];
}
else {
vErrors.push(err20);
}
errors++;
}
if(typeof data6 == "number"){
if(data6 < 0 || isNaN(data6)){
const err21 = {instancePath:instancePath+"/eventTypes",schemaPath:"#/$defs/count/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0",schema:0,parentSchema:schema38,data:data6};
if(vErrors === null){
vErrors = [err21];
}
else {
vErrors.push(err21);
}
errors++;
}
}
}
}
else {
const err22 = {instancePath,schemaPath:"#/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema37.type,parentSchema:schema37,data};
if(vErrors === null){
vErrors = [err22];
}
else {
vErrors.push(err22);
}
errors++;
}
validate24.errors = vErrors;
return errors === 0;
}
validate24.evaluated = {"props":true,"dynamicProps":false,"dynamicItems":false};

const schema45 = {"description":"The meta-tools of POST /mcp?mode=dynamic (docs/mcp-dynamic.md); generator/mcp-dynamic.ts checks roles and arguments.","type":"object","required":["tools"],"additionalProperties":false,"properties":{"tools":{"type":"array","items":{"$ref":"#/$defs/mcpDynamicTool"}},"decision":{"$ref":"#/$defs/decision"}}};
const schema46 = {"type":"object","required":["name","role","description","input"],"additionalProperties":false,"properties":{"name":{"type":"string","x-missing":"name: svc.api.<verb>"},"role":{"enum":["search","describe","read","invoke"],"x-missing":"role: search | describe | read | invoke"},"title":{"type":"string"},"description":{"type":"string","x-missing":"description: <what the meta-tool does, for the model>"},"input":{"$ref":"schema","x-missing":"input: {required: [...], properties: {...}}"},"decision":{"$ref":"#/$defs/decision"}}};
const schema47 = {"$id":"schema","$dynamicAnchor":"meta","title":"A JSON Schema of the contract","description":"JSON Schema 2020-12 (its meta-schema applies at every level), narrowed to the keywords below. $ref names a schema of schemas/ by its bare name; every enum says x-svc-enum: open or closed (checked in generator/check.ts); decision notes may stand anywhere.","allOf":[{"$ref":"https://json-schema.org/draft/2020-12/schema"}],"type":["object","boolean"],"propertyNames":{"enum":["$ref","type","description","title","enum","const","default","examples","example","format","deprecated","readOnly","writeOnly","properties","required","additionalProperties","patternProperties","propertyNames","minProperties","maxProperties","items","prefixItems","minItems","maxItems","uniqueItems","contains","minLength","maxLength","pattern","minimum","maximum","exclusiveMinimum","exclusiveMaximum","multipleOf","allOf","anyOf","oneOf","not","if","then","else","dependentRequired","contentMediaType","contentEncoding","decision","x-svc-enum","x-svc-secret","x-svc-personal"]},"properties":{"format":{"description":"The formats the generated validators check (ajv-formats).","enum":["date","time","date-time","iso-time","iso-date-time","duration","uri","uri-reference","uri-template","url","email","hostname","ipv4","ipv6","regex","uuid","json-pointer","json-pointer-uri-fragment","relative-json-pointer","byte","int32","int64","float","double","password","binary"]},"enum":{"minItems":1,"x-fix":"List at least one value, or remove enum."},"decision":{"$ref":"contract.schema.json#/$defs/decision"},"x-svc-enum":{"x-rule":"enum-without-openness","description":"open: may gain values in a minor release; closed: never changes within the major.","enum":["open","closed"]},"x-svc-secret":{"description":"A bearer secret: shown once, never logged.","type":"boolean"},"x-svc-personal":{"description":"Personal data: redacted from event data.","type":"boolean"}}};
const schema0 = {"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"https://json-schema.org/draft/2020-12/schema","$vocabulary":{"https://json-schema.org/draft/2020-12/vocab/core":true,"https://json-schema.org/draft/2020-12/vocab/applicator":true,"https://json-schema.org/draft/2020-12/vocab/unevaluated":true,"https://json-schema.org/draft/2020-12/vocab/validation":true,"https://json-schema.org/draft/2020-12/vocab/meta-data":true,"https://json-schema.org/draft/2020-12/vocab/format-annotation":true,"https://json-schema.org/draft/2020-12/vocab/content":true},"$dynamicAnchor":"meta","title":"Core and Validation specifications meta-schema","allOf":[{"$ref":"meta/core"},{"$ref":"meta/applicator"},{"$ref":"meta/unevaluated"},{"$ref":"meta/validation"},{"$ref":"meta/meta-data"},{"$ref":"meta/format-annotation"},{"$ref":"meta/content"}],"type":["object","boolean"],"$comment":"This meta-schema also defines keywords that have appeared in previous drafts in order to prevent incompatible extensions as they remain in common use.","properties":{"definitions":{"$comment":"\"definitions\" has been replaced by \"$defs\".","type":"object","additionalProperties":{"$dynamicRef":"#meta"},"deprecated":true,"default":{}},"dependencies":{"$comment":"\"dependencies\" has been split and replaced by \"dependentSchemas\" and \"dependentRequired\" in order to serve their differing semantics.","type":"object","additionalProperties":{"anyOf":[{"$dynamicRef":"#meta"},{"$ref":"meta/validation#/$defs/stringArray"}]},"deprecated":true,"default":{}},"$recursiveAnchor":{"$comment":"\"$recursiveAnchor\" has been replaced by \"$dynamicAnchor\".","$ref":"meta/core#/$defs/anchorString","deprecated":true},"$recursiveRef":{"$comment":"\"$recursiveRef\" has been replaced by \"$dynamicRef\".","$ref":"meta/core#/$defs/uriReferenceString","deprecated":true}}};
const schema23 = {"type":"array","items":{"type":"string"},"uniqueItems":true,"default":[]};
const schema5 = {"type":"string","pattern":"^[A-Za-z_][-A-Za-z0-9._]*$"};
const schema2 = {"type":"string","format":"uri-reference"};
const schema1 = {"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"https://json-schema.org/draft/2020-12/meta/core","$vocabulary":{"https://json-schema.org/draft/2020-12/vocab/core":true},"$dynamicAnchor":"meta","title":"Core vocabulary meta-schema","type":["object","boolean"],"properties":{"$id":{"$ref":"#/$defs/uriReferenceString","$comment":"Non-empty fragments not allowed.","pattern":"^[^#]*#?$"},"$schema":{"$ref":"#/$defs/uriString"},"$ref":{"$ref":"#/$defs/uriReferenceString"},"$anchor":{"$ref":"#/$defs/anchorString"},"$dynamicRef":{"$ref":"#/$defs/uriReferenceString"},"$dynamicAnchor":{"$ref":"#/$defs/anchorString"},"$vocabulary":{"type":"object","propertyNames":{"$ref":"#/$defs/uriString"},"additionalProperties":{"type":"boolean"}},"$comment":{"type":"string"},"$defs":{"type":"object","additionalProperties":{"$dynamicRef":"#meta"}}},"$defs":{"anchorString":{"type":"string","pattern":"^[A-Za-z_][-A-Za-z0-9._]*$"},"uriString":{"type":"string","format":"uri"},"uriReferenceString":{"type":"string","format":"uri-reference"}}};
const schema3 = {"type":"string","format":"uri"};
const pattern0 = new RegExp("^[^#]*#?$", "u");
const pattern1 = new RegExp("^[A-Za-z_][-A-Za-z0-9._]*$", "u");

function validate1(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){
/*# sourceURL="https://json-schema.org/draft/2020-12/meta/core" */;
let vErrors = null;
let errors = 0;
const evaluated0 = validate1.evaluated;
if(evaluated0.dynamicProps){
evaluated0.props = undefined;
}
if(evaluated0.dynamicItems){
evaluated0.items = undefined;
}
if((!(data && typeof data == "object" && !Array.isArray(data))) && (typeof data !== "boolean")){
const err0 = {instancePath,schemaPath:"#/type",keyword:"type",params:{type: schema1.type},message:"must be object,boolean",schema:schema1.type,parentSchema:schema1,data};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
if(!dynamicAnchors.meta){
dynamicAnchors.meta = validate1;
}
if(data && typeof data == "object" && !Array.isArray(data)){
if(data.$id !== undefined){
let data0 = data.$id;
if(!(typeof data0 === "string")){
const err1 = {instancePath:instancePath+"/$id",schemaPath:"#/$defs/uriReferenceString/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema2.type,parentSchema:schema2,data:data0};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
if(typeof data0 === "string"){
if(!pattern0.test(data0)){
const err2 = {instancePath:instancePath+"/$id",schemaPath:"#/properties/%24id/pattern",keyword:"pattern",params:{pattern: "^[^#]*#?$"},message:"must match pattern \""+"^[^#]*#?$"+"\"",schema:"^[^#]*#?$",parentSchema:schema1.properties.$id,data:data0};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
}
}
}
if(data.$schema !== undefined){
let data1 = data.$schema;
if(!(typeof data1 === "string")){
const err3 = {instancePath:instancePath+"/$schema",schemaPath:"#/$defs/uriString/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema3.type,parentSchema:schema3,data:data1};
if(vErrors === null){
vErrors = [err3];
}
else {
vErrors.push(err3);
}
errors++;
}
}
if(data.$ref !== undefined){
let data2 = data.$ref;
if(!(typeof data2 === "string")){
const err4 = {instancePath:instancePath+"/$ref",schemaPath:"#/$defs/uriReferenceString/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema2.type,parentSchema:schema2,data:data2};
if(vErrors === null){
vErrors = [err4];
}
else {
vErrors.push(err4);
}
errors++;
}
}
if(data.$anchor !== undefined){
let data3 = data.$anchor;
if(typeof data3 === "string"){
if(!pattern1.test(data3)){
const err5 = {instancePath:instancePath+"/$anchor",schemaPath:"#/$defs/anchorString/pattern",keyword:"pattern",params:{pattern: "^[A-Za-z_][-A-Za-z0-9._]*$"},message:"must match pattern \""+"^[A-Za-z_][-A-Za-z0-9._]*$"+"\"",schema:"^[A-Za-z_][-A-Za-z0-9._]*$",parentSchema:schema5,data:data3};
if(vErrors === null){
vErrors = [err5];
}
else {
vErrors.push(err5);
}
errors++;
}
}
else {
const err6 = {instancePath:instancePath+"/$anchor",schemaPath:"#/$defs/anchorString/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema5.type,parentSchema:schema5,data:data3};
if(vErrors === null){
vErrors = [err6];
}
else {
vErrors.push(err6);
}
errors++;
}
}
if(data.$dynamicRef !== undefined){
let data4 = data.$dynamicRef;
if(!(typeof data4 === "string")){
const err7 = {instancePath:instancePath+"/$dynamicRef",schemaPath:"#/$defs/uriReferenceString/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema2.type,parentSchema:schema2,data:data4};
if(vErrors === null){
vErrors = [err7];
}
else {
vErrors.push(err7);
}
errors++;
}
}
if(data.$dynamicAnchor !== undefined){
let data5 = data.$dynamicAnchor;
if(typeof data5 === "string"){
if(!pattern1.test(data5)){
const err8 = {instancePath:instancePath+"/$dynamicAnchor",schemaPath:"#/$defs/anchorString/pattern",keyword:"pattern",params:{pattern: "^[A-Za-z_][-A-Za-z0-9._]*$"},message:"must match pattern \""+"^[A-Za-z_][-A-Za-z0-9._]*$"+"\"",schema:"^[A-Za-z_][-A-Za-z0-9._]*$",parentSchema:schema5,data:data5};
if(vErrors === null){
vErrors = [err8];
}
else {
vErrors.push(err8);
}
errors++;
}
}
else {
const err9 = {instancePath:instancePath+"/$dynamicAnchor",schemaPath:"#/$defs/anchorString/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema5.type,parentSchema:schema5,data:data5};
if(vErrors === null){
vErrors = [err9];
}
else {
vErrors.push(err9);
}
errors++;
}
}
if(data.$vocabulary !== undefined){
let data6 = data.$vocabulary;
if(data6 && typeof data6 == "object" && !Array.isArray(data6)){
for(const key0 in data6){
const _errs22 = errors;
if(!(typeof key0 === "string")){
const err10 = {instancePath:instancePath+"/$vocabulary",schemaPath:"#/$defs/uriString/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema3.type,parentSchema:schema3,data:key0,propertyName:key0};
if(vErrors === null){
vErrors = [err10];
}
else {
vErrors.push(err10);
}
errors++;
}
var valid7 = _errs22 === errors;
if(!valid7){
const err11 = {instancePath:instancePath+"/$vocabulary",schemaPath:"#/properties/%24vocabulary/propertyNames",keyword:"propertyNames",params:{propertyName: key0},message:"property name must be valid",schema:schema1.properties.$vocabulary.propertyNames,parentSchema:schema1.properties.$vocabulary,data:data6};
if(vErrors === null){
vErrors = [err11];
}
else {
vErrors.push(err11);
}
errors++;
}
}
for(const key1 in data6){
let data7 = data6[key1];
if(typeof data7 !== "boolean"){
const err12 = {instancePath:instancePath+"/$vocabulary/" + key1.replace(/~/g, "~0").replace(/\//g, "~1"),schemaPath:"#/properties/%24vocabulary/additionalProperties/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema1.properties.$vocabulary.additionalProperties.type,parentSchema:schema1.properties.$vocabulary.additionalProperties,data:data7};
if(vErrors === null){
vErrors = [err12];
}
else {
vErrors.push(err12);
}
errors++;
}
}
}
else {
const err13 = {instancePath:instancePath+"/$vocabulary",schemaPath:"#/properties/%24vocabulary/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema1.properties.$vocabulary.type,parentSchema:schema1.properties.$vocabulary,data:data6};
if(vErrors === null){
vErrors = [err13];
}
else {
vErrors.push(err13);
}
errors++;
}
}
if(data.$comment !== undefined){
let data8 = data.$comment;
if(typeof data8 !== "string"){
const err14 = {instancePath:instancePath+"/$comment",schemaPath:"#/properties/%24comment/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema1.properties.$comment.type,parentSchema:schema1.properties.$comment,data:data8};
if(vErrors === null){
vErrors = [err14];
}
else {
vErrors.push(err14);
}
errors++;
}
}
if(data.$defs !== undefined){
let data9 = data.$defs;
if(data9 && typeof data9 == "object" && !Array.isArray(data9)){
for(const key2 in data9){
let data10 = data9[key2];
let _v0 = dynamicAnchors.meta;
if(_v0){
if(!(_v0(data10, {instancePath:instancePath+"/$defs/" + key2.replace(/~/g, "~0").replace(/\//g, "~1"),parentData:data9,parentDataProperty:key2,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? _v0.errors : vErrors.concat(_v0.errors);
errors = vErrors.length;
}
else {
var props0 = _v0.evaluated.props;
var items0 = _v0.evaluated.items;
}
}
else {
if(!(validate1(data10, {instancePath:instancePath+"/$defs/" + key2.replace(/~/g, "~0").replace(/\//g, "~1"),parentData:data9,parentDataProperty:key2,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate1.errors : vErrors.concat(validate1.errors);
errors = vErrors.length;
}
else {
var props1 = validate1.evaluated.props;
if(props0 !== true && props1 !== undefined){
if(props1 === true){
props0 = true;
}
else {
props0 = props0 || {};
Object.assign(props0, props1);
}
}
var items1 = validate1.evaluated.items;
if(items0 !== true && items1 !== undefined){
items0 = items1 === true ? true : items0 > items1 ? items0 : items1;
}
}
}
}
}
else {
const err15 = {instancePath:instancePath+"/$defs",schemaPath:"#/properties/%24defs/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema1.properties.$defs.type,parentSchema:schema1.properties.$defs,data:data9};
if(vErrors === null){
vErrors = [err15];
}
else {
vErrors.push(err15);
}
errors++;
}
}
}
validate1.errors = vErrors;
return errors === 0;
}
validate1.evaluated = {"props":{"$id":true,"$schema":true,"$ref":true,"$anchor":true,"$dynamicRef":true,"$dynamicAnchor":true,"$vocabulary":true,"$comment":true,"$defs":true},"dynamicProps":false,"dynamicItems":false};

const schema9 = {"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"https://json-schema.org/draft/2020-12/meta/applicator","$vocabulary":{"https://json-schema.org/draft/2020-12/vocab/applicator":true},"$dynamicAnchor":"meta","title":"Applicator vocabulary meta-schema","type":["object","boolean"],"properties":{"prefixItems":{"$ref":"#/$defs/schemaArray"},"items":{"$dynamicRef":"#meta"},"contains":{"$dynamicRef":"#meta"},"additionalProperties":{"$dynamicRef":"#meta"},"properties":{"type":"object","additionalProperties":{"$dynamicRef":"#meta"},"default":{}},"patternProperties":{"type":"object","additionalProperties":{"$dynamicRef":"#meta"},"propertyNames":{"format":"regex"},"default":{}},"dependentSchemas":{"type":"object","additionalProperties":{"$dynamicRef":"#meta"},"default":{}},"propertyNames":{"$dynamicRef":"#meta"},"if":{"$dynamicRef":"#meta"},"then":{"$dynamicRef":"#meta"},"else":{"$dynamicRef":"#meta"},"allOf":{"$ref":"#/$defs/schemaArray"},"anyOf":{"$ref":"#/$defs/schemaArray"},"oneOf":{"$ref":"#/$defs/schemaArray"},"not":{"$dynamicRef":"#meta"}},"$defs":{"schemaArray":{"type":"array","minItems":1,"items":{"$dynamicRef":"#meta"}}}};
const schema10 = {"type":"array","minItems":1,"items":{"$dynamicRef":"#meta"}};

function validate4(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){
let vErrors = null;
let errors = 0;
const evaluated0 = validate4.evaluated;
if(evaluated0.dynamicProps){
evaluated0.props = undefined;
}
if(evaluated0.dynamicItems){
evaluated0.items = undefined;
}
if(Array.isArray(data)){
if(data.length < 1){
const err0 = {instancePath,schemaPath:"#/minItems",keyword:"minItems",params:{limit: 1},message:"must NOT have fewer than 1 items",schema:1,parentSchema:schema10,data};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
const len0 = data.length;
for(let i0=0; i0<len0; i0++){
let data0 = data[i0];
let _v0 = dynamicAnchors.meta;
if(_v0){
if(!(_v0(data0, {instancePath:instancePath+"/" + i0,parentData:data,parentDataProperty:i0,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? _v0.errors : vErrors.concat(_v0.errors);
errors = vErrors.length;
}
else {
var props0 = _v0.evaluated.props;
var items0 = _v0.evaluated.items;
}
}
else {
if(!(validate4(data0, {instancePath:instancePath+"/" + i0,parentData:data,parentDataProperty:i0,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate4.errors : vErrors.concat(validate4.errors);
errors = vErrors.length;
}
else {
var props1 = validate4.evaluated.props;
if(props0 !== true && props1 !== undefined){
if(props1 === true){
props0 = true;
}
else {
props0 = props0 || {};
Object.assign(props0, props1);
}
}
var items1 = validate4.evaluated.items;
if(items0 !== true && items1 !== undefined){
items0 = items1 === true ? true : items0 > items1 ? items0 : items1;
}
}
}
}
}
else {
const err1 = {instancePath,schemaPath:"#/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema10.type,parentSchema:schema10,data};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
validate4.errors = vErrors;
return errors === 0;
}
validate4.evaluated = {"items":true,"dynamicProps":false,"dynamicItems":false};


function validate3(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){
/*# sourceURL="https://json-schema.org/draft/2020-12/meta/applicator" */;
let vErrors = null;
let errors = 0;
const evaluated0 = validate3.evaluated;
if(evaluated0.dynamicProps){
evaluated0.props = undefined;
}
if(evaluated0.dynamicItems){
evaluated0.items = undefined;
}
if((!(data && typeof data == "object" && !Array.isArray(data))) && (typeof data !== "boolean")){
const err0 = {instancePath,schemaPath:"#/type",keyword:"type",params:{type: schema9.type},message:"must be object,boolean",schema:schema9.type,parentSchema:schema9,data};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
if(!dynamicAnchors.meta){
dynamicAnchors.meta = validate3;
}
if(data && typeof data == "object" && !Array.isArray(data)){
if(data.prefixItems !== undefined){
if(!(validate4(data.prefixItems, {instancePath:instancePath+"/prefixItems",parentData:data,parentDataProperty:"prefixItems",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate4.errors : vErrors.concat(validate4.errors);
errors = vErrors.length;
}
}
if(data.items !== undefined){
let data1 = data.items;
let _v0 = dynamicAnchors.meta;
if(_v0){
if(!(_v0(data1, {instancePath:instancePath+"/items",parentData:data,parentDataProperty:"items",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? _v0.errors : vErrors.concat(_v0.errors);
errors = vErrors.length;
}
else {
var props0 = _v0.evaluated.props;
var items0 = _v0.evaluated.items;
}
}
else {
if(!(validate3(data1, {instancePath:instancePath+"/items",parentData:data,parentDataProperty:"items",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate3.errors : vErrors.concat(validate3.errors);
errors = vErrors.length;
}
else {
var props1 = validate3.evaluated.props;
if(props0 !== true && props1 !== undefined){
if(props1 === true){
props0 = true;
}
else {
props0 = props0 || {};
Object.assign(props0, props1);
}
}
var items1 = validate3.evaluated.items;
if(items0 !== true && items1 !== undefined){
items0 = items1 === true ? true : items0 > items1 ? items0 : items1;
}
}
}
}
if(data.contains !== undefined){
let data2 = data.contains;
let _v1 = dynamicAnchors.meta;
if(_v1){
if(!(_v1(data2, {instancePath:instancePath+"/contains",parentData:data,parentDataProperty:"contains",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? _v1.errors : vErrors.concat(_v1.errors);
errors = vErrors.length;
}
else {
var props2 = _v1.evaluated.props;
var items2 = _v1.evaluated.items;
}
}
else {
if(!(validate3(data2, {instancePath:instancePath+"/contains",parentData:data,parentDataProperty:"contains",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate3.errors : vErrors.concat(validate3.errors);
errors = vErrors.length;
}
else {
var props3 = validate3.evaluated.props;
if(props2 !== true && props3 !== undefined){
if(props3 === true){
props2 = true;
}
else {
props2 = props2 || {};
Object.assign(props2, props3);
}
}
var items3 = validate3.evaluated.items;
if(items2 !== true && items3 !== undefined){
items2 = items3 === true ? true : items2 > items3 ? items2 : items3;
}
}
}
}
if(data.additionalProperties !== undefined){
let data3 = data.additionalProperties;
let _v2 = dynamicAnchors.meta;
if(_v2){
if(!(_v2(data3, {instancePath:instancePath+"/additionalProperties",parentData:data,parentDataProperty:"additionalProperties",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? _v2.errors : vErrors.concat(_v2.errors);
errors = vErrors.length;
}
else {
var props4 = _v2.evaluated.props;
var items4 = _v2.evaluated.items;
}
}
else {
if(!(validate3(data3, {instancePath:instancePath+"/additionalProperties",parentData:data,parentDataProperty:"additionalProperties",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate3.errors : vErrors.concat(validate3.errors);
errors = vErrors.length;
}
else {
var props5 = validate3.evaluated.props;
if(props4 !== true && props5 !== undefined){
if(props5 === true){
props4 = true;
}
else {
props4 = props4 || {};
Object.assign(props4, props5);
}
}
var items5 = validate3.evaluated.items;
if(items4 !== true && items5 !== undefined){
items4 = items5 === true ? true : items4 > items5 ? items4 : items5;
}
}
}
}
if(data.properties !== undefined){
let data4 = data.properties;
if(data4 && typeof data4 == "object" && !Array.isArray(data4)){
for(const key0 in data4){
let data5 = data4[key0];
let _v3 = dynamicAnchors.meta;
if(_v3){
if(!(_v3(data5, {instancePath:instancePath+"/properties/" + key0.replace(/~/g, "~0").replace(/\//g, "~1"),parentData:data4,parentDataProperty:key0,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? _v3.errors : vErrors.concat(_v3.errors);
errors = vErrors.length;
}
else {
var props6 = _v3.evaluated.props;
var items6 = _v3.evaluated.items;
}
}
else {
if(!(validate3(data5, {instancePath:instancePath+"/properties/" + key0.replace(/~/g, "~0").replace(/\//g, "~1"),parentData:data4,parentDataProperty:key0,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate3.errors : vErrors.concat(validate3.errors);
errors = vErrors.length;
}
else {
var props7 = validate3.evaluated.props;
if(props6 !== true && props7 !== undefined){
if(props7 === true){
props6 = true;
}
else {
props6 = props6 || {};
Object.assign(props6, props7);
}
}
var items7 = validate3.evaluated.items;
if(items6 !== true && items7 !== undefined){
items6 = items7 === true ? true : items6 > items7 ? items6 : items7;
}
}
}
}
}
else {
const err1 = {instancePath:instancePath+"/properties",schemaPath:"#/properties/properties/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema9.properties.properties.type,parentSchema:schema9.properties.properties,data:data4};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
}
if(data.patternProperties !== undefined){
let data6 = data.patternProperties;
if(data6 && typeof data6 == "object" && !Array.isArray(data6)){
for(const key1 in data6){
const _errs11 = errors;
var valid2 = _errs11 === errors;
if(!valid2){
const err2 = {instancePath:instancePath+"/patternProperties",schemaPath:"#/properties/patternProperties/propertyNames",keyword:"propertyNames",params:{propertyName: key1},message:"property name must be valid",schema:schema9.properties.patternProperties.propertyNames,parentSchema:schema9.properties.patternProperties,data:data6};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
}
}
for(const key2 in data6){
let data7 = data6[key2];
let _v4 = dynamicAnchors.meta;
if(_v4){
if(!(_v4(data7, {instancePath:instancePath+"/patternProperties/" + key2.replace(/~/g, "~0").replace(/\//g, "~1"),parentData:data6,parentDataProperty:key2,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? _v4.errors : vErrors.concat(_v4.errors);
errors = vErrors.length;
}
else {
var props8 = _v4.evaluated.props;
var items8 = _v4.evaluated.items;
}
}
else {
if(!(validate3(data7, {instancePath:instancePath+"/patternProperties/" + key2.replace(/~/g, "~0").replace(/\//g, "~1"),parentData:data6,parentDataProperty:key2,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate3.errors : vErrors.concat(validate3.errors);
errors = vErrors.length;
}
else {
var props9 = validate3.evaluated.props;
if(props8 !== true && props9 !== undefined){
if(props9 === true){
props8 = true;
}
else {
props8 = props8 || {};
Object.assign(props8, props9);
}
}
var items9 = validate3.evaluated.items;
if(items8 !== true && items9 !== undefined){
items8 = items9 === true ? true : items8 > items9 ? items8 : items9;
}
}
}
}
}
else {
const err3 = {instancePath:instancePath+"/patternProperties",schemaPath:"#/properties/patternProperties/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema9.properties.patternProperties.type,parentSchema:schema9.properties.patternProperties,data:data6};
if(vErrors === null){
vErrors = [err3];
}
else {
vErrors.push(err3);
}
errors++;
}
}
if(data.dependentSchemas !== undefined){
let data8 = data.dependentSchemas;
if(data8 && typeof data8 == "object" && !Array.isArray(data8)){
for(const key3 in data8){
let data9 = data8[key3];
let _v5 = dynamicAnchors.meta;
if(_v5){
if(!(_v5(data9, {instancePath:instancePath+"/dependentSchemas/" + key3.replace(/~/g, "~0").replace(/\//g, "~1"),parentData:data8,parentDataProperty:key3,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? _v5.errors : vErrors.concat(_v5.errors);
errors = vErrors.length;
}
else {
var props10 = _v5.evaluated.props;
var items10 = _v5.evaluated.items;
}
}
else {
if(!(validate3(data9, {instancePath:instancePath+"/dependentSchemas/" + key3.replace(/~/g, "~0").replace(/\//g, "~1"),parentData:data8,parentDataProperty:key3,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate3.errors : vErrors.concat(validate3.errors);
errors = vErrors.length;
}
else {
var props11 = validate3.evaluated.props;
if(props10 !== true && props11 !== undefined){
if(props11 === true){
props10 = true;
}
else {
props10 = props10 || {};
Object.assign(props10, props11);
}
}
var items11 = validate3.evaluated.items;
if(items10 !== true && items11 !== undefined){
items10 = items11 === true ? true : items10 > items11 ? items10 : items11;
}
}
}
}
}
else {
const err4 = {instancePath:instancePath+"/dependentSchemas",schemaPath:"#/properties/dependentSchemas/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema9.properties.dependentSchemas.type,parentSchema:schema9.properties.dependentSchemas,data:data8};
if(vErrors === null){
vErrors = [err4];
}
else {
vErrors.push(err4);
}
errors++;
}
}
if(data.propertyNames !== undefined){
let data10 = data.propertyNames;
let _v6 = dynamicAnchors.meta;
if(_v6){
if(!(_v6(data10, {instancePath:instancePath+"/propertyNames",parentData:data,parentDataProperty:"propertyNames",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? _v6.errors : vErrors.concat(_v6.errors);
errors = vErrors.length;
}
else {
var props12 = _v6.evaluated.props;
var items12 = _v6.evaluated.items;
}
}
else {
if(!(validate3(data10, {instancePath:instancePath+"/propertyNames",parentData:data,parentDataProperty:"propertyNames",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate3.errors : vErrors.concat(validate3.errors);
errors = vErrors.length;
}
else {
var props13 = validate3.evaluated.props;
if(props12 !== true && props13 !== undefined){
if(props13 === true){
props12 = true;
}
else {
props12 = props12 || {};
Object.assign(props12, props13);
}
}
var items13 = validate3.evaluated.items;
if(items12 !== true && items13 !== undefined){
items12 = items13 === true ? true : items12 > items13 ? items12 : items13;
}
}
}
}
if(data.if !== undefined){
let data11 = data.if;
let _v7 = dynamicAnchors.meta;
if(_v7){
if(!(_v7(data11, {instancePath:instancePath+"/if",parentData:data,parentDataProperty:"if",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? _v7.errors : vErrors.concat(_v7.errors);
errors = vErrors.length;
}
else {
var props14 = _v7.evaluated.props;
var items14 = _v7.evaluated.items;
}
}
else {
if(!(validate3(data11, {instancePath:instancePath+"/if",parentData:data,parentDataProperty:"if",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate3.errors : vErrors.concat(validate3.errors);
errors = vErrors.length;
}
else {
var props15 = validate3.evaluated.props;
if(props14 !== true && props15 !== undefined){
if(props15 === true){
props14 = true;
}
else {
props14 = props14 || {};
Object.assign(props14, props15);
}
}
var items15 = validate3.evaluated.items;
if(items14 !== true && items15 !== undefined){
items14 = items15 === true ? true : items14 > items15 ? items14 : items15;
}
}
}
}
if(data.then !== undefined){
let data12 = data.then;
let _v8 = dynamicAnchors.meta;
if(_v8){
if(!(_v8(data12, {instancePath:instancePath+"/then",parentData:data,parentDataProperty:"then",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? _v8.errors : vErrors.concat(_v8.errors);
errors = vErrors.length;
}
else {
var props16 = _v8.evaluated.props;
var items16 = _v8.evaluated.items;
}
}
else {
if(!(validate3(data12, {instancePath:instancePath+"/then",parentData:data,parentDataProperty:"then",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate3.errors : vErrors.concat(validate3.errors);
errors = vErrors.length;
}
else {
var props17 = validate3.evaluated.props;
if(props16 !== true && props17 !== undefined){
if(props17 === true){
props16 = true;
}
else {
props16 = props16 || {};
Object.assign(props16, props17);
}
}
var items17 = validate3.evaluated.items;
if(items16 !== true && items17 !== undefined){
items16 = items17 === true ? true : items16 > items17 ? items16 : items17;
}
}
}
}
if(data.else !== undefined){
let data13 = data.else;
let _v9 = dynamicAnchors.meta;
if(_v9){
if(!(_v9(data13, {instancePath:instancePath+"/else",parentData:data,parentDataProperty:"else",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? _v9.errors : vErrors.concat(_v9.errors);
errors = vErrors.length;
}
else {
var props18 = _v9.evaluated.props;
var items18 = _v9.evaluated.items;
}
}
else {
if(!(validate3(data13, {instancePath:instancePath+"/else",parentData:data,parentDataProperty:"else",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate3.errors : vErrors.concat(validate3.errors);
errors = vErrors.length;
}
else {
var props19 = validate3.evaluated.props;
if(props18 !== true && props19 !== undefined){
if(props19 === true){
props18 = true;
}
else {
props18 = props18 || {};
Object.assign(props18, props19);
}
}
var items19 = validate3.evaluated.items;
if(items18 !== true && items19 !== undefined){
items18 = items19 === true ? true : items18 > items19 ? items18 : items19;
}
}
}
}
if(data.allOf !== undefined){
if(!(validate4(data.allOf, {instancePath:instancePath+"/allOf",parentData:data,parentDataProperty:"allOf",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate4.errors : vErrors.concat(validate4.errors);
errors = vErrors.length;
}
}
if(data.anyOf !== undefined){
if(!(validate4(data.anyOf, {instancePath:instancePath+"/anyOf",parentData:data,parentDataProperty:"anyOf",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate4.errors : vErrors.concat(validate4.errors);
errors = vErrors.length;
}
}
if(data.oneOf !== undefined){
if(!(validate4(data.oneOf, {instancePath:instancePath+"/oneOf",parentData:data,parentDataProperty:"oneOf",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate4.errors : vErrors.concat(validate4.errors);
errors = vErrors.length;
}
}
if(data.not !== undefined){
let data17 = data.not;
let _v10 = dynamicAnchors.meta;
if(_v10){
if(!(_v10(data17, {instancePath:instancePath+"/not",parentData:data,parentDataProperty:"not",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? _v10.errors : vErrors.concat(_v10.errors);
errors = vErrors.length;
}
else {
var props20 = _v10.evaluated.props;
var items20 = _v10.evaluated.items;
}
}
else {
if(!(validate3(data17, {instancePath:instancePath+"/not",parentData:data,parentDataProperty:"not",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate3.errors : vErrors.concat(validate3.errors);
errors = vErrors.length;
}
else {
var props21 = validate3.evaluated.props;
if(props20 !== true && props21 !== undefined){
if(props21 === true){
props20 = true;
}
else {
props20 = props20 || {};
Object.assign(props20, props21);
}
}
var items21 = validate3.evaluated.items;
if(items20 !== true && items21 !== undefined){
items20 = items21 === true ? true : items20 > items21 ? items20 : items21;
}
}
}
}
}
validate3.errors = vErrors;
return errors === 0;
}
validate3.evaluated = {"props":{"prefixItems":true,"items":true,"contains":true,"additionalProperties":true,"properties":true,"patternProperties":true,"dependentSchemas":true,"propertyNames":true,"if":true,"then":true,"else":true,"allOf":true,"anyOf":true,"oneOf":true,"not":true},"dynamicProps":false,"dynamicItems":false};

const schema11 = {"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"https://json-schema.org/draft/2020-12/meta/unevaluated","$vocabulary":{"https://json-schema.org/draft/2020-12/vocab/unevaluated":true},"$dynamicAnchor":"meta","title":"Unevaluated applicator vocabulary meta-schema","type":["object","boolean"],"properties":{"unevaluatedItems":{"$dynamicRef":"#meta"},"unevaluatedProperties":{"$dynamicRef":"#meta"}}};

function validate10(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){
/*# sourceURL="https://json-schema.org/draft/2020-12/meta/unevaluated" */;
let vErrors = null;
let errors = 0;
const evaluated0 = validate10.evaluated;
if(evaluated0.dynamicProps){
evaluated0.props = undefined;
}
if(evaluated0.dynamicItems){
evaluated0.items = undefined;
}
if((!(data && typeof data == "object" && !Array.isArray(data))) && (typeof data !== "boolean")){
const err0 = {instancePath,schemaPath:"#/type",keyword:"type",params:{type: schema11.type},message:"must be object,boolean",schema:schema11.type,parentSchema:schema11,data};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
if(!dynamicAnchors.meta){
dynamicAnchors.meta = validate10;
}
if(data && typeof data == "object" && !Array.isArray(data)){
if(data.unevaluatedItems !== undefined){
let data0 = data.unevaluatedItems;
let _v0 = dynamicAnchors.meta;
if(_v0){
if(!(_v0(data0, {instancePath:instancePath+"/unevaluatedItems",parentData:data,parentDataProperty:"unevaluatedItems",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? _v0.errors : vErrors.concat(_v0.errors);
errors = vErrors.length;
}
else {
var props0 = _v0.evaluated.props;
var items0 = _v0.evaluated.items;
}
}
else {
if(!(validate10(data0, {instancePath:instancePath+"/unevaluatedItems",parentData:data,parentDataProperty:"unevaluatedItems",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate10.errors : vErrors.concat(validate10.errors);
errors = vErrors.length;
}
else {
var props1 = validate10.evaluated.props;
if(props0 !== true && props1 !== undefined){
if(props1 === true){
props0 = true;
}
else {
props0 = props0 || {};
Object.assign(props0, props1);
}
}
var items1 = validate10.evaluated.items;
if(items0 !== true && items1 !== undefined){
items0 = items1 === true ? true : items0 > items1 ? items0 : items1;
}
}
}
}
if(data.unevaluatedProperties !== undefined){
let data1 = data.unevaluatedProperties;
let _v1 = dynamicAnchors.meta;
if(_v1){
if(!(_v1(data1, {instancePath:instancePath+"/unevaluatedProperties",parentData:data,parentDataProperty:"unevaluatedProperties",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? _v1.errors : vErrors.concat(_v1.errors);
errors = vErrors.length;
}
else {
var props2 = _v1.evaluated.props;
var items2 = _v1.evaluated.items;
}
}
else {
if(!(validate10(data1, {instancePath:instancePath+"/unevaluatedProperties",parentData:data,parentDataProperty:"unevaluatedProperties",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate10.errors : vErrors.concat(validate10.errors);
errors = vErrors.length;
}
else {
var props3 = validate10.evaluated.props;
if(props2 !== true && props3 !== undefined){
if(props3 === true){
props2 = true;
}
else {
props2 = props2 || {};
Object.assign(props2, props3);
}
}
var items3 = validate10.evaluated.items;
if(items2 !== true && items3 !== undefined){
items2 = items3 === true ? true : items2 > items3 ? items2 : items3;
}
}
}
}
}
validate10.errors = vErrors;
return errors === 0;
}
validate10.evaluated = {"props":{"unevaluatedItems":true,"unevaluatedProperties":true},"dynamicProps":false,"dynamicItems":false};

const schema12 = {"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"https://json-schema.org/draft/2020-12/meta/validation","$vocabulary":{"https://json-schema.org/draft/2020-12/vocab/validation":true},"$dynamicAnchor":"meta","title":"Validation vocabulary meta-schema","type":["object","boolean"],"properties":{"type":{"anyOf":[{"$ref":"#/$defs/simpleTypes"},{"type":"array","items":{"$ref":"#/$defs/simpleTypes"},"minItems":1,"uniqueItems":true}]},"const":true,"enum":{"type":"array","items":true},"multipleOf":{"type":"number","exclusiveMinimum":0},"maximum":{"type":"number"},"exclusiveMaximum":{"type":"number"},"minimum":{"type":"number"},"exclusiveMinimum":{"type":"number"},"maxLength":{"$ref":"#/$defs/nonNegativeInteger"},"minLength":{"$ref":"#/$defs/nonNegativeIntegerDefault0"},"pattern":{"type":"string","format":"regex"},"maxItems":{"$ref":"#/$defs/nonNegativeInteger"},"minItems":{"$ref":"#/$defs/nonNegativeIntegerDefault0"},"uniqueItems":{"type":"boolean","default":false},"maxContains":{"$ref":"#/$defs/nonNegativeInteger"},"minContains":{"$ref":"#/$defs/nonNegativeInteger","default":1},"maxProperties":{"$ref":"#/$defs/nonNegativeInteger"},"minProperties":{"$ref":"#/$defs/nonNegativeIntegerDefault0"},"required":{"$ref":"#/$defs/stringArray"},"dependentRequired":{"type":"object","additionalProperties":{"$ref":"#/$defs/stringArray"}}},"$defs":{"nonNegativeInteger":{"type":"integer","minimum":0},"nonNegativeIntegerDefault0":{"$ref":"#/$defs/nonNegativeInteger","default":0},"simpleTypes":{"enum":["array","boolean","integer","null","number","object","string"]},"stringArray":{"type":"array","items":{"type":"string"},"uniqueItems":true,"default":[]}}};
const schema13 = {"enum":["array","boolean","integer","null","number","object","string"]};
const schema15 = {"type":"integer","minimum":0};
const func0 = require("ajv/dist/runtime/equal").default;

function validate12(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){
/*# sourceURL="https://json-schema.org/draft/2020-12/meta/validation" */;
let vErrors = null;
let errors = 0;
const evaluated0 = validate12.evaluated;
if(evaluated0.dynamicProps){
evaluated0.props = undefined;
}
if(evaluated0.dynamicItems){
evaluated0.items = undefined;
}
if((!(data && typeof data == "object" && !Array.isArray(data))) && (typeof data !== "boolean")){
const err0 = {instancePath,schemaPath:"#/type",keyword:"type",params:{type: schema12.type},message:"must be object,boolean",schema:schema12.type,parentSchema:schema12,data};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
if(!dynamicAnchors.meta){
dynamicAnchors.meta = validate12;
}
if(data && typeof data == "object" && !Array.isArray(data)){
if(data.type !== undefined){
let data0 = data.type;
const _errs2 = errors;
let valid1 = false;
const _errs3 = errors;
if(!(((((((data0 === "array") || (data0 === "boolean")) || (data0 === "integer")) || (data0 === "null")) || (data0 === "number")) || (data0 === "object")) || (data0 === "string"))){
const err1 = {instancePath:instancePath+"/type",schemaPath:"#/$defs/simpleTypes/enum",keyword:"enum",params:{allowedValues: schema13.enum},message:"must be equal to one of the allowed values",schema:schema13.enum,parentSchema:schema13,data:data0};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
var _valid0 = _errs3 === errors;
valid1 = valid1 || _valid0;
const _errs5 = errors;
if(Array.isArray(data0)){
if(data0.length < 1){
const err2 = {instancePath:instancePath+"/type",schemaPath:"#/properties/type/anyOf/1/minItems",keyword:"minItems",params:{limit: 1},message:"must NOT have fewer than 1 items",schema:1,parentSchema:schema12.properties.type.anyOf[1],data:data0};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
}
const len0 = data0.length;
for(let i0=0; i0<len0; i0++){
let data1 = data0[i0];
if(!(((((((data1 === "array") || (data1 === "boolean")) || (data1 === "integer")) || (data1 === "null")) || (data1 === "number")) || (data1 === "object")) || (data1 === "string"))){
const err3 = {instancePath:instancePath+"/type/" + i0,schemaPath:"#/$defs/simpleTypes/enum",keyword:"enum",params:{allowedValues: schema13.enum},message:"must be equal to one of the allowed values",schema:schema13.enum,parentSchema:schema13,data:data1};
if(vErrors === null){
vErrors = [err3];
}
else {
vErrors.push(err3);
}
errors++;
}
}
let i1 = data0.length;
let j0;
if(i1 > 1){
outer0:
for(;i1--;){
for(j0 = i1; j0--;){
if(func0(data0[i1], data0[j0])){
const err4 = {instancePath:instancePath+"/type",schemaPath:"#/properties/type/anyOf/1/uniqueItems",keyword:"uniqueItems",params:{i: i1, j: j0},message:"must NOT have duplicate items (items ## "+j0+" and "+i1+" are identical)",schema:true,parentSchema:schema12.properties.type.anyOf[1],data:data0};
if(vErrors === null){
vErrors = [err4];
}
else {
vErrors.push(err4);
}
errors++;
break outer0;
}
}
}
}
}
else {
const err5 = {instancePath:instancePath+"/type",schemaPath:"#/properties/type/anyOf/1/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema12.properties.type.anyOf[1].type,parentSchema:schema12.properties.type.anyOf[1],data:data0};
if(vErrors === null){
vErrors = [err5];
}
else {
vErrors.push(err5);
}
errors++;
}
var _valid0 = _errs5 === errors;
valid1 = valid1 || _valid0;
if(!valid1){
const err6 = {instancePath:instancePath+"/type",schemaPath:"#/properties/type/anyOf",keyword:"anyOf",params:{},message:"must match a schema in anyOf",schema:schema12.properties.type.anyOf,parentSchema:schema12.properties.type,data:data0};
if(vErrors === null){
vErrors = [err6];
}
else {
vErrors.push(err6);
}
errors++;
}
else {
errors = _errs2;
if(vErrors !== null){
if(_errs2){
vErrors.length = _errs2;
}
else {
vErrors = null;
}
}
}
}
if(data.enum !== undefined){
let data2 = data.enum;
if(!(Array.isArray(data2))){
const err7 = {instancePath:instancePath+"/enum",schemaPath:"#/properties/enum/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema12.properties.enum.type,parentSchema:schema12.properties.enum,data:data2};
if(vErrors === null){
vErrors = [err7];
}
else {
vErrors.push(err7);
}
errors++;
}
}
if(data.multipleOf !== undefined){
let data3 = data.multipleOf;
if(typeof data3 == "number"){
if(data3 <= 0 || isNaN(data3)){
const err8 = {instancePath:instancePath+"/multipleOf",schemaPath:"#/properties/multipleOf/exclusiveMinimum",keyword:"exclusiveMinimum",params:{comparison: ">", limit: 0},message:"must be > 0",schema:0,parentSchema:schema12.properties.multipleOf,data:data3};
if(vErrors === null){
vErrors = [err8];
}
else {
vErrors.push(err8);
}
errors++;
}
}
else {
const err9 = {instancePath:instancePath+"/multipleOf",schemaPath:"#/properties/multipleOf/type",keyword:"type",params:{type: "number"},message:"must be number",schema:schema12.properties.multipleOf.type,parentSchema:schema12.properties.multipleOf,data:data3};
if(vErrors === null){
vErrors = [err9];
}
else {
vErrors.push(err9);
}
errors++;
}
}
if(data.maximum !== undefined){
let data4 = data.maximum;
if(!(typeof data4 == "number")){
const err10 = {instancePath:instancePath+"/maximum",schemaPath:"#/properties/maximum/type",keyword:"type",params:{type: "number"},message:"must be number",schema:schema12.properties.maximum.type,parentSchema:schema12.properties.maximum,data:data4};
if(vErrors === null){
vErrors = [err10];
}
else {
vErrors.push(err10);
}
errors++;
}
}
if(data.exclusiveMaximum !== undefined){
let data5 = data.exclusiveMaximum;
if(!(typeof data5 == "number")){
const err11 = {instancePath:instancePath+"/exclusiveMaximum",schemaPath:"#/properties/exclusiveMaximum/type",keyword:"type",params:{type: "number"},message:"must be number",schema:schema12.properties.exclusiveMaximum.type,parentSchema:schema12.properties.exclusiveMaximum,data:data5};
if(vErrors === null){
vErrors = [err11];
}
else {
vErrors.push(err11);
}
errors++;
}
}
if(data.minimum !== undefined){
let data6 = data.minimum;
if(!(typeof data6 == "number")){
const err12 = {instancePath:instancePath+"/minimum",schemaPath:"#/properties/minimum/type",keyword:"type",params:{type: "number"},message:"must be number",schema:schema12.properties.minimum.type,parentSchema:schema12.properties.minimum,data:data6};
if(vErrors === null){
vErrors = [err12];
}
else {
vErrors.push(err12);
}
errors++;
}
}
if(data.exclusiveMinimum !== undefined){
let data7 = data.exclusiveMinimum;
if(!(typeof data7 == "number")){
const err13 = {instancePath:instancePath+"/exclusiveMinimum",schemaPath:"#/properties/exclusiveMinimum/type",keyword:"type",params:{type: "number"},message:"must be number",schema:schema12.properties.exclusiveMinimum.type,parentSchema:schema12.properties.exclusiveMinimum,data:data7};
if(vErrors === null){
vErrors = [err13];
}
else {
vErrors.push(err13);
}
errors++;
}
}
if(data.maxLength !== undefined){
let data8 = data.maxLength;
if(!((typeof data8 == "number") && (!(data8 % 1) && !isNaN(data8)))){
const err14 = {instancePath:instancePath+"/maxLength",schemaPath:"#/$defs/nonNegativeInteger/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema15.type,parentSchema:schema15,data:data8};
if(vErrors === null){
vErrors = [err14];
}
else {
vErrors.push(err14);
}
errors++;
}
if(typeof data8 == "number"){
if(data8 < 0 || isNaN(data8)){
const err15 = {instancePath:instancePath+"/maxLength",schemaPath:"#/$defs/nonNegativeInteger/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0",schema:0,parentSchema:schema15,data:data8};
if(vErrors === null){
vErrors = [err15];
}
else {
vErrors.push(err15);
}
errors++;
}
}
}
if(data.minLength !== undefined){
let data9 = data.minLength;
if(!((typeof data9 == "number") && (!(data9 % 1) && !isNaN(data9)))){
const err16 = {instancePath:instancePath+"/minLength",schemaPath:"#/$defs/nonNegativeIntegerDefault0/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema15.type,parentSchema:schema15,data:data9};
if(vErrors === null){
vErrors = [err16];
}
else {
vErrors.push(err16);
}
errors++;
}
if(typeof data9 == "number"){
if(data9 < 0 || isNaN(data9)){
const err17 = {instancePath:instancePath+"/minLength",schemaPath:"#/$defs/nonNegativeIntegerDefault0/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0",schema:0,parentSchema:schema15,data:data9};
if(vErrors === null){
vErrors = [err17];
}
else {
vErrors.push(err17);
}
errors++;
}
}
}
if(data.pattern !== undefined){
let data10 = data.pattern;
if(!(typeof data10 === "string")){
const err18 = {instancePath:instancePath+"/pattern",schemaPath:"#/properties/pattern/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema12.properties.pattern.type,parentSchema:schema12.properties.pattern,data:data10};
if(vErrors === null){
vErrors = [err18];
}
else {
vErrors.push(err18);
}
errors++;
}
}
if(data.maxItems !== undefined){
let data11 = data.maxItems;
if(!((typeof data11 == "number") && (!(data11 % 1) && !isNaN(data11)))){
const err19 = {instancePath:instancePath+"/maxItems",schemaPath:"#/$defs/nonNegativeInteger/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema15.type,parentSchema:schema15,data:data11};
if(vErrors === null){
vErrors = [err19];
}
else {
vErrors.push(err19);
}
errors++;
}
if(typeof data11 == "number"){
if(data11 < 0 || isNaN(data11)){
const err20 = {instancePath:instancePath+"/maxItems",schemaPath:"#/$defs/nonNegativeInteger/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0",schema:0,parentSchema:schema15,data:data11};
if(vErrors === null){
vErrors = [err20];
}
else {
vErrors.push(err20);
}
errors++;
}
}
}
if(data.minItems !== undefined){
let data12 = data.minItems;
if(!((typeof data12 == "number") && (!(data12 % 1) && !isNaN(data12)))){
const err21 = {instancePath:instancePath+"/minItems",schemaPath:"#/$defs/nonNegativeIntegerDefault0/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema15.type,parentSchema:schema15,data:data12};
if(vErrors === null){
vErrors = [err21];
}
else {
vErrors.push(err21);
}
errors++;
}
if(typeof data12 == "number"){
if(data12 < 0 || isNaN(data12)){
const err22 = {instancePath:instancePath+"/minItems",schemaPath:"#/$defs/nonNegativeIntegerDefault0/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0",schema:0,parentSchema:schema15,data:data12};
if(vErrors === null){
vErrors = [err22];
}
else {
vErrors.push(err22);
}
errors++;
}
}
}
if(data.uniqueItems !== undefined){
let data13 = data.uniqueItems;
if(typeof data13 !== "boolean"){
const err23 = {instancePath:instancePath+"/uniqueItems",schemaPath:"#/properties/uniqueItems/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema12.properties.uniqueItems.type,parentSchema:schema12.properties.uniqueItems,data:data13};
if(vErrors === null){
vErrors = [err23];
}
else {
vErrors.push(err23);
}
errors++;
}
}
if(data.maxContains !== undefined){
let data14 = data.maxContains;
if(!((typeof data14 == "number") && (!(data14 % 1) && !isNaN(data14)))){
const err24 = {instancePath:instancePath+"/maxContains",schemaPath:"#/$defs/nonNegativeInteger/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema15.type,parentSchema:schema15,data:data14};
if(vErrors === null){
vErrors = [err24];
}
else {
vErrors.push(err24);
}
errors++;
}
if(typeof data14 == "number"){
if(data14 < 0 || isNaN(data14)){
const err25 = {instancePath:instancePath+"/maxContains",schemaPath:"#/$defs/nonNegativeInteger/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0",schema:0,parentSchema:schema15,data:data14};
if(vErrors === null){
vErrors = [err25];
}
else {
vErrors.push(err25);
}
errors++;
}
}
}
if(data.minContains !== undefined){
let data15 = data.minContains;
if(!((typeof data15 == "number") && (!(data15 % 1) && !isNaN(data15)))){
const err26 = {instancePath:instancePath+"/minContains",schemaPath:"#/$defs/nonNegativeInteger/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema15.type,parentSchema:schema15,data:data15};
if(vErrors === null){
vErrors = [err26];
}
else {
vErrors.push(err26);
}
errors++;
}
if(typeof data15 == "number"){
if(data15 < 0 || isNaN(data15)){
const err27 = {instancePath:instancePath+"/minContains",schemaPath:"#/$defs/nonNegativeInteger/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0",schema:0,parentSchema:schema15,data:data15};
if(vErrors === null){
vErrors = [err27];
}
else {
vErrors.push(err27);
}
errors++;
}
}
}
if(data.maxProperties !== undefined){
let data16 = data.maxProperties;
if(!((typeof data16 == "number") && (!(data16 % 1) && !isNaN(data16)))){
const err28 = {instancePath:instancePath+"/maxProperties",schemaPath:"#/$defs/nonNegativeInteger/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema15.type,parentSchema:schema15,data:data16};
if(vErrors === null){
vErrors = [err28];
}
else {
vErrors.push(err28);
}
errors++;
}
if(typeof data16 == "number"){
if(data16 < 0 || isNaN(data16)){
const err29 = {instancePath:instancePath+"/maxProperties",schemaPath:"#/$defs/nonNegativeInteger/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0",schema:0,parentSchema:schema15,data:data16};
if(vErrors === null){
vErrors = [err29];
}
else {
vErrors.push(err29);
}
errors++;
}
}
}
if(data.minProperties !== undefined){
let data17 = data.minProperties;
if(!((typeof data17 == "number") && (!(data17 % 1) && !isNaN(data17)))){
const err30 = {instancePath:instancePath+"/minProperties",schemaPath:"#/$defs/nonNegativeIntegerDefault0/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema15.type,parentSchema:schema15,data:data17};
if(vErrors === null){
vErrors = [err30];
}
else {
vErrors.push(err30);
}
errors++;
}
if(typeof data17 == "number"){
if(data17 < 0 || isNaN(data17)){
const err31 = {instancePath:instancePath+"/minProperties",schemaPath:"#/$defs/nonNegativeIntegerDefault0/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0",schema:0,parentSchema:schema15,data:data17};
if(vErrors === null){
vErrors = [err31];
}
else {
vErrors.push(err31);
}
errors++;
}
}
}
if(data.required !== undefined){
let data18 = data.required;
if(Array.isArray(data18)){
const len1 = data18.length;
for(let i2=0; i2<len1; i2++){
let data19 = data18[i2];
if(typeof data19 !== "string"){
const err32 = {instancePath:instancePath+"/required/" + i2,schemaPath:"#/$defs/stringArray/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema23.items.type,parentSchema:schema23.items,data:data19};
if(vErrors === null){
vErrors = [err32];
}
else {
vErrors.push(err32);
}
errors++;
}
}
let i3 = data18.length;
let j1;
if(i3 > 1){
const indices0 = {};
for(;i3--;){
let item0 = data18[i3];
if(typeof item0 !== "string"){
continue;
}
if(typeof indices0[item0] == "number"){
j1 = indices0[item0];
const err33 = {instancePath:instancePath+"/required",schemaPath:"#/$defs/stringArray/uniqueItems",keyword:"uniqueItems",params:{i: i3, j: j1},message:"must NOT have duplicate items (items ## "+j1+" and "+i3+" are identical)",schema:true,parentSchema:schema23,data:data18};
if(vErrors === null){
vErrors = [err33];
}
else {
vErrors.push(err33);
}
errors++;
break;
}
indices0[item0] = i3;
}
}
}
else {
const err34 = {instancePath:instancePath+"/required",schemaPath:"#/$defs/stringArray/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema23.type,parentSchema:schema23,data:data18};
if(vErrors === null){
vErrors = [err34];
}
else {
vErrors.push(err34);
}
errors++;
}
}
if(data.dependentRequired !== undefined){
let data20 = data.dependentRequired;
if(data20 && typeof data20 == "object" && !Array.isArray(data20)){
for(const key0 in data20){
let data21 = data20[key0];
if(Array.isArray(data21)){
const len2 = data21.length;
for(let i4=0; i4<len2; i4++){
let data22 = data21[i4];
if(typeof data22 !== "string"){
const err35 = {instancePath:instancePath+"/dependentRequired/" + key0.replace(/~/g, "~0").replace(/\//g, "~1")+"/" + i4,schemaPath:"#/$defs/stringArray/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema23.items.type,parentSchema:schema23.items,data:data22};
if(vErrors === null){
vErrors = [err35];
}
else {
vErrors.push(err35);
}
errors++;
}
}
let i5 = data21.length;
let j2;
if(i5 > 1){
const indices1 = {};
for(;i5--;){
let item1 = data21[i5];
if(typeof item1 !== "string"){
continue;
}
if(typeof indices1[item1] == "number"){
j2 = indices1[item1];
const err36 = {instancePath:instancePath+"/dependentRequired/" + key0.replace(/~/g, "~0").replace(/\//g, "~1"),schemaPath:"#/$defs/stringArray/uniqueItems",keyword:"uniqueItems",params:{i: i5, j: j2},message:"must NOT have duplicate items (items ## "+j2+" and "+i5+" are identical)",schema:true,parentSchema:schema23,data:data21};
if(vErrors === null){
vErrors = [err36];
}
else {
vErrors.push(err36);
}
errors++;
break;
}
indices1[item1] = i5;
}
}
}
else {
const err37 = {instancePath:instancePath+"/dependentRequired/" + key0.replace(/~/g, "~0").replace(/\//g, "~1"),schemaPath:"#/$defs/stringArray/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema23.type,parentSchema:schema23,data:data21};
if(vErrors === null){
vErrors = [err37];
}
else {
vErrors.push(err37);
}
errors++;
}
}
}
else {
const err38 = {instancePath:instancePath+"/dependentRequired",schemaPath:"#/properties/dependentRequired/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema12.properties.dependentRequired.type,parentSchema:schema12.properties.dependentRequired,data:data20};
if(vErrors === null){
vErrors = [err38];
}
else {
vErrors.push(err38);
}
errors++;
}
}
}
validate12.errors = vErrors;
return errors === 0;
}
validate12.evaluated = {"props":{"type":true,"const":true,"enum":true,"multipleOf":true,"maximum":true,"exclusiveMaximum":true,"minimum":true,"exclusiveMinimum":true,"maxLength":true,"minLength":true,"pattern":true,"maxItems":true,"minItems":true,"uniqueItems":true,"maxContains":true,"minContains":true,"maxProperties":true,"minProperties":true,"required":true,"dependentRequired":true},"dynamicProps":false,"dynamicItems":false};

const schema25 = {"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"https://json-schema.org/draft/2020-12/meta/meta-data","$vocabulary":{"https://json-schema.org/draft/2020-12/vocab/meta-data":true},"$dynamicAnchor":"meta","title":"Meta-data vocabulary meta-schema","type":["object","boolean"],"properties":{"title":{"type":"string"},"description":{"type":"string"},"default":true,"deprecated":{"type":"boolean","default":false},"readOnly":{"type":"boolean","default":false},"writeOnly":{"type":"boolean","default":false},"examples":{"type":"array","items":true}}};

function validate14(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){
/*# sourceURL="https://json-schema.org/draft/2020-12/meta/meta-data" */;
let vErrors = null;
let errors = 0;
const evaluated0 = validate14.evaluated;
if(evaluated0.dynamicProps){
evaluated0.props = undefined;
}
if(evaluated0.dynamicItems){
evaluated0.items = undefined;
}
if((!(data && typeof data == "object" && !Array.isArray(data))) && (typeof data !== "boolean")){
const err0 = {instancePath,schemaPath:"#/type",keyword:"type",params:{type: schema25.type},message:"must be object,boolean",schema:schema25.type,parentSchema:schema25,data};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
if(!dynamicAnchors.meta){
dynamicAnchors.meta = validate14;
}
if(data && typeof data == "object" && !Array.isArray(data)){
if(data.title !== undefined){
let data0 = data.title;
if(typeof data0 !== "string"){
const err1 = {instancePath:instancePath+"/title",schemaPath:"#/properties/title/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema25.properties.title.type,parentSchema:schema25.properties.title,data:data0};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
}
if(data.description !== undefined){
let data1 = data.description;
if(typeof data1 !== "string"){
const err2 = {instancePath:instancePath+"/description",schemaPath:"#/properties/description/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema25.properties.description.type,parentSchema:schema25.properties.description,data:data1};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
}
}
if(data.deprecated !== undefined){
let data2 = data.deprecated;
if(typeof data2 !== "boolean"){
const err3 = {instancePath:instancePath+"/deprecated",schemaPath:"#/properties/deprecated/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema25.properties.deprecated.type,parentSchema:schema25.properties.deprecated,data:data2};
if(vErrors === null){
vErrors = [err3];
}
else {
vErrors.push(err3);
}
errors++;
}
}
if(data.readOnly !== undefined){
let data3 = data.readOnly;
if(typeof data3 !== "boolean"){
const err4 = {instancePath:instancePath+"/readOnly",schemaPath:"#/properties/readOnly/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema25.properties.readOnly.type,parentSchema:schema25.properties.readOnly,data:data3};
if(vErrors === null){
vErrors = [err4];
}
else {
vErrors.push(err4);
}
errors++;
}
}
if(data.writeOnly !== undefined){
let data4 = data.writeOnly;
if(typeof data4 !== "boolean"){
const err5 = {instancePath:instancePath+"/writeOnly",schemaPath:"#/properties/writeOnly/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema25.properties.writeOnly.type,parentSchema:schema25.properties.writeOnly,data:data4};
if(vErrors === null){
vErrors = [err5];
}
else {
vErrors.push(err5);
}
errors++;
}
}
if(data.examples !== undefined){
let data5 = data.examples;
if(!(Array.isArray(data5))){
const err6 = {instancePath:instancePath+"/examples",schemaPath:"#/properties/examples/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema25.properties.examples.type,parentSchema:schema25.properties.examples,data:data5};
if(vErrors === null){
vErrors = [err6];
}
else {
vErrors.push(err6);
}
errors++;
}
}
}
validate14.errors = vErrors;
return errors === 0;
}
validate14.evaluated = {"props":{"title":true,"description":true,"default":true,"deprecated":true,"readOnly":true,"writeOnly":true,"examples":true},"dynamicProps":false,"dynamicItems":false};

const schema26 = {"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"https://json-schema.org/draft/2020-12/meta/format-annotation","$vocabulary":{"https://json-schema.org/draft/2020-12/vocab/format-annotation":true},"$dynamicAnchor":"meta","title":"Format vocabulary meta-schema for annotation results","type":["object","boolean"],"properties":{"format":{"type":"string"}}};

function validate16(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){
/*# sourceURL="https://json-schema.org/draft/2020-12/meta/format-annotation" */;
let vErrors = null;
let errors = 0;
const evaluated0 = validate16.evaluated;
if(evaluated0.dynamicProps){
evaluated0.props = undefined;
}
if(evaluated0.dynamicItems){
evaluated0.items = undefined;
}
if((!(data && typeof data == "object" && !Array.isArray(data))) && (typeof data !== "boolean")){
const err0 = {instancePath,schemaPath:"#/type",keyword:"type",params:{type: schema26.type},message:"must be object,boolean",schema:schema26.type,parentSchema:schema26,data};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
if(!dynamicAnchors.meta){
dynamicAnchors.meta = validate16;
}
if(data && typeof data == "object" && !Array.isArray(data)){
if(data.format !== undefined){
let data0 = data.format;
if(typeof data0 !== "string"){
const err1 = {instancePath:instancePath+"/format",schemaPath:"#/properties/format/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema26.properties.format.type,parentSchema:schema26.properties.format,data:data0};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
}
}
validate16.errors = vErrors;
return errors === 0;
}
validate16.evaluated = {"props":{"format":true},"dynamicProps":false,"dynamicItems":false};

const schema27 = {"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"https://json-schema.org/draft/2020-12/meta/content","$vocabulary":{"https://json-schema.org/draft/2020-12/vocab/content":true},"$dynamicAnchor":"meta","title":"Content vocabulary meta-schema","type":["object","boolean"],"properties":{"contentEncoding":{"type":"string"},"contentMediaType":{"type":"string"},"contentSchema":{"$dynamicRef":"#meta"}}};

function validate18(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){
/*# sourceURL="https://json-schema.org/draft/2020-12/meta/content" */;
let vErrors = null;
let errors = 0;
const evaluated0 = validate18.evaluated;
if(evaluated0.dynamicProps){
evaluated0.props = undefined;
}
if(evaluated0.dynamicItems){
evaluated0.items = undefined;
}
if((!(data && typeof data == "object" && !Array.isArray(data))) && (typeof data !== "boolean")){
const err0 = {instancePath,schemaPath:"#/type",keyword:"type",params:{type: schema27.type},message:"must be object,boolean",schema:schema27.type,parentSchema:schema27,data};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
if(!dynamicAnchors.meta){
dynamicAnchors.meta = validate18;
}
if(data && typeof data == "object" && !Array.isArray(data)){
if(data.contentEncoding !== undefined){
let data0 = data.contentEncoding;
if(typeof data0 !== "string"){
const err1 = {instancePath:instancePath+"/contentEncoding",schemaPath:"#/properties/contentEncoding/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema27.properties.contentEncoding.type,parentSchema:schema27.properties.contentEncoding,data:data0};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
}
if(data.contentMediaType !== undefined){
let data1 = data.contentMediaType;
if(typeof data1 !== "string"){
const err2 = {instancePath:instancePath+"/contentMediaType",schemaPath:"#/properties/contentMediaType/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema27.properties.contentMediaType.type,parentSchema:schema27.properties.contentMediaType,data:data1};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
}
}
if(data.contentSchema !== undefined){
let data2 = data.contentSchema;
let _v0 = dynamicAnchors.meta;
if(_v0){
if(!(_v0(data2, {instancePath:instancePath+"/contentSchema",parentData:data,parentDataProperty:"contentSchema",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? _v0.errors : vErrors.concat(_v0.errors);
errors = vErrors.length;
}
else {
var props0 = _v0.evaluated.props;
var items0 = _v0.evaluated.items;
}
}
else {
if(!(validate18(data2, {instancePath:instancePath+"/contentSchema",parentData:data,parentDataProperty:"contentSchema",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate18.errors : vErrors.concat(validate18.errors);
errors = vErrors.length;
}
else {
var props1 = validate18.evaluated.props;
if(props0 !== true && props1 !== undefined){
if(props1 === true){
props0 = true;
}
else {
props0 = props0 || {};
Object.assign(props0, props1);
}
}
var items1 = validate18.evaluated.items;
if(items0 !== true && items1 !== undefined){
items0 = items1 === true ? true : items0 > items1 ? items0 : items1;
}
}
}
}
}
validate18.errors = vErrors;
return errors === 0;
}
validate18.evaluated = {"props":{"contentEncoding":true,"contentMediaType":true,"contentSchema":true},"dynamicProps":false,"dynamicItems":false};


function validate0(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){
/*# sourceURL="https://json-schema.org/draft/2020-12/schema" */;
let vErrors = null;
let errors = 0;
const evaluated0 = validate0.evaluated;
if(evaluated0.dynamicProps){
evaluated0.props = undefined;
}
if(evaluated0.dynamicItems){
evaluated0.items = undefined;
}
if((!(data && typeof data == "object" && !Array.isArray(data))) && (typeof data !== "boolean")){
const err0 = {instancePath,schemaPath:"#/type",keyword:"type",params:{type: schema0.type},message:"must be object,boolean",schema:schema0.type,parentSchema:schema0,data};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
if(!dynamicAnchors.meta){
dynamicAnchors.meta = validate0;
}
if(!(validate1(data, {instancePath,parentData,parentDataProperty,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate1.errors : vErrors.concat(validate1.errors);
errors = vErrors.length;
}
if(!(validate3(data, {instancePath,parentData,parentDataProperty,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate3.errors : vErrors.concat(validate3.errors);
errors = vErrors.length;
}
if(!(validate10(data, {instancePath,parentData,parentDataProperty,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate10.errors : vErrors.concat(validate10.errors);
errors = vErrors.length;
}
if(!(validate12(data, {instancePath,parentData,parentDataProperty,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate12.errors : vErrors.concat(validate12.errors);
errors = vErrors.length;
}
if(!(validate14(data, {instancePath,parentData,parentDataProperty,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate14.errors : vErrors.concat(validate14.errors);
errors = vErrors.length;
}
if(!(validate16(data, {instancePath,parentData,parentDataProperty,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate16.errors : vErrors.concat(validate16.errors);
errors = vErrors.length;
}
if(!(validate18(data, {instancePath,parentData,parentDataProperty,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate18.errors : vErrors.concat(validate18.errors);
errors = vErrors.length;
}
if(data && typeof data == "object" && !Array.isArray(data)){
if(data.definitions !== undefined){
let data0 = data.definitions;
if(data0 && typeof data0 == "object" && !Array.isArray(data0)){
for(const key0 in data0){
let data1 = data0[key0];
let _v0 = dynamicAnchors.meta;
if(_v0){
if(!(_v0(data1, {instancePath:instancePath+"/definitions/" + key0.replace(/~/g, "~0").replace(/\//g, "~1"),parentData:data0,parentDataProperty:key0,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? _v0.errors : vErrors.concat(_v0.errors);
errors = vErrors.length;
}
else {
var props0 = _v0.evaluated.props;
var items0 = _v0.evaluated.items;
}
}
else {
if(!(validate0(data1, {instancePath:instancePath+"/definitions/" + key0.replace(/~/g, "~0").replace(/\//g, "~1"),parentData:data0,parentDataProperty:key0,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate0.errors : vErrors.concat(validate0.errors);
errors = vErrors.length;
}
else {
var props1 = validate0.evaluated.props;
if(props0 !== true && props1 !== undefined){
if(props1 === true){
props0 = true;
}
else {
props0 = props0 || {};
Object.assign(props0, props1);
}
}
var items1 = validate0.evaluated.items;
if(items0 !== true && items1 !== undefined){
items0 = items1 === true ? true : items0 > items1 ? items0 : items1;
}
}
}
}
}
else {
const err1 = {instancePath:instancePath+"/definitions",schemaPath:"#/properties/definitions/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema0.properties.definitions.type,parentSchema:schema0.properties.definitions,data:data0};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
}
if(data.dependencies !== undefined){
let data2 = data.dependencies;
if(data2 && typeof data2 == "object" && !Array.isArray(data2)){
for(const key1 in data2){
let data3 = data2[key1];
const _errs19 = errors;
let valid4 = false;
const _errs20 = errors;
let _v1 = dynamicAnchors.meta;
if(_v1){
if(!(_v1(data3, {instancePath:instancePath+"/dependencies/" + key1.replace(/~/g, "~0").replace(/\//g, "~1"),parentData:data2,parentDataProperty:key1,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? _v1.errors : vErrors.concat(_v1.errors);
errors = vErrors.length;
}
else {
var props2 = _v1.evaluated.props;
var items2 = _v1.evaluated.items;
}
}
else {
if(!(validate0(data3, {instancePath:instancePath+"/dependencies/" + key1.replace(/~/g, "~0").replace(/\//g, "~1"),parentData:data2,parentDataProperty:key1,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate0.errors : vErrors.concat(validate0.errors);
errors = vErrors.length;
}
else {
var props3 = validate0.evaluated.props;
if(props2 !== true && props3 !== undefined){
if(props3 === true){
props2 = true;
}
else {
props2 = props2 || {};
Object.assign(props2, props3);
}
}
var items3 = validate0.evaluated.items;
if(items2 !== true && items3 !== undefined){
items2 = items3 === true ? true : items2 > items3 ? items2 : items3;
}
}
}
var _valid0 = _errs20 === errors;
valid4 = valid4 || _valid0;
const _errs21 = errors;
if(Array.isArray(data3)){
const len0 = data3.length;
for(let i0=0; i0<len0; i0++){
let data4 = data3[i0];
if(typeof data4 !== "string"){
const err2 = {instancePath:instancePath+"/dependencies/" + key1.replace(/~/g, "~0").replace(/\//g, "~1")+"/" + i0,schemaPath:"meta/validation#/$defs/stringArray/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema23.items.type,parentSchema:schema23.items,data:data4};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
}
}
let i1 = data3.length;
let j0;
if(i1 > 1){
const indices0 = {};
for(;i1--;){
let item0 = data3[i1];
if(typeof item0 !== "string"){
continue;
}
if(typeof indices0[item0] == "number"){
j0 = indices0[item0];
const err3 = {instancePath:instancePath+"/dependencies/" + key1.replace(/~/g, "~0").replace(/\//g, "~1"),schemaPath:"meta/validation#/$defs/stringArray/uniqueItems",keyword:"uniqueItems",params:{i: i1, j: j0},message:"must NOT have duplicate items (items ## "+j0+" and "+i1+" are identical)",schema:true,parentSchema:schema23,data:data3};
if(vErrors === null){
vErrors = [err3];
}
else {
vErrors.push(err3);
}
errors++;
break;
}
indices0[item0] = i1;
}
}
}
else {
const err4 = {instancePath:instancePath+"/dependencies/" + key1.replace(/~/g, "~0").replace(/\//g, "~1"),schemaPath:"meta/validation#/$defs/stringArray/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema23.type,parentSchema:schema23,data:data3};
if(vErrors === null){
vErrors = [err4];
}
else {
vErrors.push(err4);
}
errors++;
}
var _valid0 = _errs21 === errors;
valid4 = valid4 || _valid0;
if(_valid0){
if(items2 !== true){
items2 = true;
}
}
if(!valid4){
const err5 = {instancePath:instancePath+"/dependencies/" + key1.replace(/~/g, "~0").replace(/\//g, "~1"),schemaPath:"#/properties/dependencies/additionalProperties/anyOf",keyword:"anyOf",params:{},message:"must match a schema in anyOf",schema:schema0.properties.dependencies.additionalProperties.anyOf,parentSchema:schema0.properties.dependencies.additionalProperties,data:data3};
if(vErrors === null){
vErrors = [err5];
}
else {
vErrors.push(err5);
}
errors++;
}
else {
errors = _errs19;
if(vErrors !== null){
if(_errs19){
vErrors.length = _errs19;
}
else {
vErrors = null;
}
}
}
}
}
else {
const err6 = {instancePath:instancePath+"/dependencies",schemaPath:"#/properties/dependencies/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema0.properties.dependencies.type,parentSchema:schema0.properties.dependencies,data:data2};
if(vErrors === null){
vErrors = [err6];
}
else {
vErrors.push(err6);
}
errors++;
}
}
if(data.$recursiveAnchor !== undefined){
let data5 = data.$recursiveAnchor;
if(typeof data5 === "string"){
if(!pattern1.test(data5)){
const err7 = {instancePath:instancePath+"/$recursiveAnchor",schemaPath:"meta/core#/$defs/anchorString/pattern",keyword:"pattern",params:{pattern: "^[A-Za-z_][-A-Za-z0-9._]*$"},message:"must match pattern \""+"^[A-Za-z_][-A-Za-z0-9._]*$"+"\"",schema:"^[A-Za-z_][-A-Za-z0-9._]*$",parentSchema:schema5,data:data5};
if(vErrors === null){
vErrors = [err7];
}
else {
vErrors.push(err7);
}
errors++;
}
}
else {
const err8 = {instancePath:instancePath+"/$recursiveAnchor",schemaPath:"meta/core#/$defs/anchorString/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema5.type,parentSchema:schema5,data:data5};
if(vErrors === null){
vErrors = [err8];
}
else {
vErrors.push(err8);
}
errors++;
}
}
if(data.$recursiveRef !== undefined){
let data6 = data.$recursiveRef;
if(!(typeof data6 === "string")){
const err9 = {instancePath:instancePath+"/$recursiveRef",schemaPath:"meta/core#/$defs/uriReferenceString/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema2.type,parentSchema:schema2,data:data6};
if(vErrors === null){
vErrors = [err9];
}
else {
vErrors.push(err9);
}
errors++;
}
}
}
validate0.errors = vErrors;
return errors === 0;
}
validate0.evaluated = {"props":{"definitions":true,"dependencies":true,"$recursiveAnchor":true,"$recursiveRef":true,"contentEncoding":true,"contentMediaType":true,"contentSchema":true,"format":true,"title":true,"description":true,"default":true,"deprecated":true,"readOnly":true,"writeOnly":true,"examples":true,"type":true,"const":true,"enum":true,"multipleOf":true,"maximum":true,"exclusiveMaximum":true,"minimum":true,"exclusiveMinimum":true,"maxLength":true,"minLength":true,"pattern":true,"maxItems":true,"minItems":true,"uniqueItems":true,"maxContains":true,"minContains":true,"maxProperties":true,"minProperties":true,"required":true,"dependentRequired":true,"unevaluatedItems":true,"unevaluatedProperties":true,"prefixItems":true,"items":true,"contains":true,"additionalProperties":true,"properties":true,"patternProperties":true,"dependentSchemas":true,"propertyNames":true,"if":true,"then":true,"else":true,"allOf":true,"anyOf":true,"oneOf":true,"not":true,"$id":true,"$schema":true,"$ref":true,"$anchor":true,"$dynamicRef":true,"$dynamicAnchor":true,"$vocabulary":true,"$comment":true,"$defs":true},"dynamicProps":false,"dynamicItems":false};


function validate28(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){
/*# sourceURL="schema" */;
let vErrors = null;
let errors = 0;
const evaluated0 = validate28.evaluated;
if(evaluated0.dynamicProps){
evaluated0.props = undefined;
}
if(evaluated0.dynamicItems){
evaluated0.items = undefined;
}
if((!(data && typeof data == "object" && !Array.isArray(data))) && (typeof data !== "boolean")){
const err0 = {instancePath,schemaPath:"#/type",keyword:"type",params:{type: schema47.type},message:"must be object,boolean",schema:schema47.type,parentSchema:schema47,data};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
if(!dynamicAnchors.meta){
dynamicAnchors.meta = validate28;
}
if(!(validate0(data, {instancePath,parentData,parentDataProperty,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate0.errors : vErrors.concat(validate0.errors);
errors = vErrors.length;
}
if(data && typeof data == "object" && !Array.isArray(data)){
for(const key0 in data){
const _errs2 = errors;
if(!((((((((((((((((((((((((((((((((((((((((((((((((key0 === "$ref") || (key0 === "type")) || (key0 === "description")) || (key0 === "title")) || (key0 === "enum")) || (key0 === "const")) || (key0 === "default")) || (key0 === "examples")) || (key0 === "example")) || (key0 === "format")) || (key0 === "deprecated")) || (key0 === "readOnly")) || (key0 === "writeOnly")) || (key0 === "properties")) || (key0 === "required")) || (key0 === "additionalProperties")) || (key0 === "patternProperties")) || (key0 === "propertyNames")) || (key0 === "minProperties")) || (key0 === "maxProperties")) || (key0 === "items")) || (key0 === "prefixItems")) || (key0 === "minItems")) || (key0 === "maxItems")) || (key0 === "uniqueItems")) || (key0 === "contains")) || (key0 === "minLength")) || (key0 === "maxLength")) || (key0 === "pattern")) || (key0 === "minimum")) || (key0 === "maximum")) || (key0 === "exclusiveMinimum")) || (key0 === "exclusiveMaximum")) || (key0 === "multipleOf")) || (key0 === "allOf")) || (key0 === "anyOf")) || (key0 === "oneOf")) || (key0 === "not")) || (key0 === "if")) || (key0 === "then")) || (key0 === "else")) || (key0 === "dependentRequired")) || (key0 === "contentMediaType")) || (key0 === "contentEncoding")) || (key0 === "decision")) || (key0 === "x-svc-enum")) || (key0 === "x-svc-secret")) || (key0 === "x-svc-personal"))){
const err1 = {instancePath,schemaPath:"#/propertyNames/enum",keyword:"enum",params:{allowedValues: schema47.propertyNames.enum},message:"must be equal to one of the allowed values",schema:schema47.propertyNames.enum,parentSchema:schema47.propertyNames,data:key0,propertyName:key0};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
var valid1 = _errs2 === errors;
if(!valid1){
const err2 = {instancePath,schemaPath:"#/propertyNames",keyword:"propertyNames",params:{propertyName: key0},message:"property name must be valid",schema:schema47.propertyNames,parentSchema:schema47,data};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
}
}
if(data.format !== undefined){
let data0 = data.format;
if(!((((((((((((((((((((((((((data0 === "date") || (data0 === "time")) || (data0 === "date-time")) || (data0 === "iso-time")) || (data0 === "iso-date-time")) || (data0 === "duration")) || (data0 === "uri")) || (data0 === "uri-reference")) || (data0 === "uri-template")) || (data0 === "url")) || (data0 === "email")) || (data0 === "hostname")) || (data0 === "ipv4")) || (data0 === "ipv6")) || (data0 === "regex")) || (data0 === "uuid")) || (data0 === "json-pointer")) || (data0 === "json-pointer-uri-fragment")) || (data0 === "relative-json-pointer")) || (data0 === "byte")) || (data0 === "int32")) || (data0 === "int64")) || (data0 === "float")) || (data0 === "double")) || (data0 === "password")) || (data0 === "binary"))){
const err3 = {instancePath:instancePath+"/format",schemaPath:"#/properties/format/enum",keyword:"enum",params:{allowedValues: schema47.properties.format.enum},message:"must be equal to one of the allowed values",schema:schema47.properties.format.enum,parentSchema:schema47.properties.format,data:data0};
if(vErrors === null){
vErrors = [err3];
}
else {
vErrors.push(err3);
}
errors++;
}
}
if(data.enum !== undefined){
let data1 = data.enum;
if(Array.isArray(data1)){
if(data1.length < 1){
const err4 = {instancePath:instancePath+"/enum",schemaPath:"#/properties/enum/minItems",keyword:"minItems",params:{limit: 1},message:"must NOT have fewer than 1 items",schema:1,parentSchema:schema47.properties.enum,data:data1};
if(vErrors === null){
vErrors = [err4];
}
else {
vErrors.push(err4);
}
errors++;
}
}
}
if(data.decision !== undefined){
let data2 = data.decision;
if(typeof data2 !== "string"){
const err5 = {instancePath:instancePath+"/decision",schemaPath:"contract.schema.json#/$defs/decision/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema36.type,parentSchema:schema36,data:data2};
if(vErrors === null){
vErrors = [err5];
}
else {
vErrors.push(err5);
}
errors++;
}
}
if(data["x-svc-enum"] !== undefined){
let data3 = data["x-svc-enum"];
if(!((data3 === "open") || (data3 === "closed"))){
const err6 = {instancePath:instancePath+"/x-svc-enum",schemaPath:"#/properties/x-svc-enum/enum",keyword:"enum",params:{allowedValues: schema47.properties["x-svc-enum"].enum},message:"must be equal to one of the allowed values",schema:schema47.properties["x-svc-enum"].enum,parentSchema:schema47.properties["x-svc-enum"],data:data3};
if(vErrors === null){
vErrors = [err6];
}
else {
vErrors.push(err6);
}
errors++;
}
}
if(data["x-svc-secret"] !== undefined){
let data4 = data["x-svc-secret"];
if(typeof data4 !== "boolean"){
const err7 = {instancePath:instancePath+"/x-svc-secret",schemaPath:"#/properties/x-svc-secret/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema47.properties["x-svc-secret"].type,parentSchema:schema47.properties["x-svc-secret"],data:data4};
if(vErrors === null){
vErrors = [err7];
}
else {
vErrors.push(err7);
}
errors++;
}
}
if(data["x-svc-personal"] !== undefined){
let data5 = data["x-svc-personal"];
if(typeof data5 !== "boolean"){
const err8 = {instancePath:instancePath+"/x-svc-personal",schemaPath:"#/properties/x-svc-personal/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema47.properties["x-svc-personal"].type,parentSchema:schema47.properties["x-svc-personal"],data:data5};
if(vErrors === null){
vErrors = [err8];
}
else {
vErrors.push(err8);
}
errors++;
}
}
}
validate28.errors = vErrors;
return errors === 0;
}
validate28.evaluated = {"props":{"format":true,"enum":true,"decision":true,"x-svc-enum":true,"x-svc-secret":true,"x-svc-personal":true,"definitions":true,"dependencies":true,"$recursiveAnchor":true,"$recursiveRef":true,"contentEncoding":true,"contentMediaType":true,"contentSchema":true,"title":true,"description":true,"default":true,"deprecated":true,"readOnly":true,"writeOnly":true,"examples":true,"type":true,"const":true,"multipleOf":true,"maximum":true,"exclusiveMaximum":true,"minimum":true,"exclusiveMinimum":true,"maxLength":true,"minLength":true,"pattern":true,"maxItems":true,"minItems":true,"uniqueItems":true,"maxContains":true,"minContains":true,"maxProperties":true,"minProperties":true,"required":true,"dependentRequired":true,"unevaluatedItems":true,"unevaluatedProperties":true,"prefixItems":true,"items":true,"contains":true,"additionalProperties":true,"properties":true,"patternProperties":true,"dependentSchemas":true,"propertyNames":true,"if":true,"then":true,"else":true,"allOf":true,"anyOf":true,"oneOf":true,"not":true,"$id":true,"$schema":true,"$ref":true,"$anchor":true,"$dynamicRef":true,"$dynamicAnchor":true,"$vocabulary":true,"$comment":true,"$defs":true},"dynamicProps":false,"dynamicItems":false};


function validate27(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){
let vErrors = null;
let errors = 0;
const evaluated0 = validate27.evaluated;
if(evaluated0.dynamicProps){
evaluated0.props = undefined;
}
if(evaluated0.dynamicItems){
evaluated0.items = undefined;
}
if(data && typeof data == "object" && !Array.isArray(data)){
if(data.name === undefined){
const err0 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "name"},message:"must have required property '"+"name"+"'",schema:schema46.required,parentSchema:schema46,data};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
if(data.role === undefined){
const err1 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "role"},message:"must have required property '"+"role"+"'",schema:schema46.required,parentSchema:schema46,data};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
if(data.description === undefined){
const err2 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "description"},message:"must have required property '"+"description"+"'",schema:schema46.required,parentSchema:schema46,data};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
}
if(data.input === undefined){
const err3 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "input"},message:"must have required property '"+"input"+"'",schema:schema46.required,parentSchema:schema46,data};
if(vErrors === null){
vErrors = [err3];
}
else {
vErrors.push(err3);
}
errors++;
}
for(const key0 in data){
if(!((((((key0 === "name") || (key0 === "role")) || (key0 === "title")) || (key0 === "description")) || (key0 === "input")) || (key0 === "decision"))){
const err4 = {instancePath,schemaPath:"#/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties",schema:false,parentSchema:schema46,data};
if(vErrors === null){
vErrors = [err4];
}
else {
vErrors.push(err4);
}
errors++;
}
}
if(data.name !== undefined){
let data0 = data.name;
if(typeof data0 !== "string"){
const err5 = {instancePath:instancePath+"/name",schemaPath:"#/properties/name/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema46.properties.name.type,parentSchema:schema46.properties.name,data:data0};
if(vErrors === null){
vErrors = [err5];
}
else {
vErrors.push(err5);
}
errors++;
}
}
if(data.role !== undefined){
let data1 = data.role;
if(!((((data1 === "search") || (data1 === "describe")) || (data1 === "read")) || (data1 === "invoke"))){
const err6 = {instancePath:instancePath+"/role",schemaPath:"#/properties/role/enum",keyword:"enum",params:{allowedValues: schema46.properties.role.enum},message:"must be equal to one of the allowed values",schema:schema46.properties.role.enum,parentSchema:schema46.properties.role,data:data1};
if(vErrors === null){
vErrors = [err6];
}
else {
vErrors.push(err6);
}
errors++;
}
}
if(data.title !== undefined){
let data2 = data.title;
if(typeof data2 !== "string"){
const err7 = {instancePath:instancePath+"/title",schemaPath:"#/properties/title/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema46.properties.title.type,parentSchema:schema46.properties.title,data:data2};
if(vErrors === null){
vErrors = [err7];
}
else {
vErrors.push(err7);
}
errors++;
}
}
if(data.description !== undefined){
let data3 = data.description;
if(typeof data3 !== "string"){
const err8 = {instancePath:instancePath+"/description",schemaPath:"#/properties/description/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema46.properties.description.type,parentSchema:schema46.properties.description,data:data3};
if(vErrors === null){
vErrors = [err8];
}
else {
vErrors.push(err8);
}
errors++;
}
}
if(data.input !== undefined){
if(!(validate28(data.input, {instancePath:instancePath+"/input",parentData:data,parentDataProperty:"input",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate28.errors : vErrors.concat(validate28.errors);
errors = vErrors.length;
}
}
if(data.decision !== undefined){
let data5 = data.decision;
if(typeof data5 !== "string"){
const err9 = {instancePath:instancePath+"/decision",schemaPath:"#/$defs/decision/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema36.type,parentSchema:schema36,data:data5};
if(vErrors === null){
vErrors = [err9];
}
else {
vErrors.push(err9);
}
errors++;
}
}
}
else {
const err10 = {instancePath,schemaPath:"#/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema46.type,parentSchema:schema46,data};
if(vErrors === null){
vErrors = [err10];
}
else {
vErrors.push(err10);
}
errors++;
}
validate27.errors = vErrors;
return errors === 0;
}
validate27.evaluated = {"props":true,"dynamicProps":false,"dynamicItems":false};


function validate26(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){
let vErrors = null;
let errors = 0;
const evaluated0 = validate26.evaluated;
if(evaluated0.dynamicProps){
evaluated0.props = undefined;
}
if(evaluated0.dynamicItems){
evaluated0.items = undefined;
}
if(data && typeof data == "object" && !Array.isArray(data)){
if(data.tools === undefined){
const err0 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "tools"},message:"must have required property '"+"tools"+"'",schema:schema45.required,parentSchema:schema45,data};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
for(const key0 in data){
if(!((key0 === "tools") || (key0 === "decision"))){
const err1 = {instancePath,schemaPath:"#/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties",schema:false,parentSchema:schema45,data};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
}
if(data.tools !== undefined){
let data0 = data.tools;
if(Array.isArray(data0)){
const len0 = data0.length;
for(let i0=0; i0<len0; i0++){
if(!(validate27(data0[i0], {instancePath:instancePath+"/tools/" + i0,parentData:data0,parentDataProperty:i0,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate27.errors : vErrors.concat(validate27.errors);
errors = vErrors.length;
}
}
}
else {
const err2 = {instancePath:instancePath+"/tools",schemaPath:"#/properties/tools/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema45.properties.tools.type,parentSchema:schema45.properties.tools,data:data0};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
}
}
if(data.decision !== undefined){
let data2 = data.decision;
if(typeof data2 !== "string"){
const err3 = {instancePath:instancePath+"/decision",schemaPath:"#/$defs/decision/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema36.type,parentSchema:schema36,data:data2};
if(vErrors === null){
vErrors = [err3];
}
else {
vErrors.push(err3);
}
errors++;
}
}
}
else {
const err4 = {instancePath,schemaPath:"#/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema45.type,parentSchema:schema45,data};
if(vErrors === null){
vErrors = [err4];
}
else {
vErrors.push(err4);
}
errors++;
}
validate26.errors = vErrors;
return errors === 0;
}
validate26.evaluated = {"props":true,"dynamicProps":false,"dynamicItems":false};

const schema54 = {"description":"A path version in service (v1, v2); a deprecated one carries the deprecation fields.","type":"object","required":["version"],"additionalProperties":false,"properties":{"version":{"type":"string","pattern":"^v\\d+$","x-expect":"a path version such as v1","x-missing":"version: v1"},"status":{"enum":["current","deprecated"]},"released":{"type":"string"},"since":{"type":"string"},"sunset":{"type":["string","null"]},"link":{"type":"string"},"successor":{"type":"string"},"successorLink":{"type":"string"},"decision":{"$ref":"#/$defs/decision"}}};
const pattern8 = new RegExp("^v\\d+$", "u");

function validate33(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){
let vErrors = null;
let errors = 0;
const evaluated0 = validate33.evaluated;
if(evaluated0.dynamicProps){
evaluated0.props = undefined;
}
if(evaluated0.dynamicItems){
evaluated0.items = undefined;
}
if(data && typeof data == "object" && !Array.isArray(data)){
if(data.version === undefined){
const err0 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "version"},message:"must have required property '"+"version"+"'",schema:schema54.required,parentSchema:schema54,data};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
for(const key0 in data){
if(!(func1.call(schema54.properties, key0))){
const err1 = {instancePath,schemaPath:"#/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties",schema:false,parentSchema:schema54,data};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
}
if(data.version !== undefined){
let data0 = data.version;
if(typeof data0 === "string"){
if(!pattern8.test(data0)){
const err2 = {instancePath:instancePath+"/version",schemaPath:"#/properties/version/pattern",keyword:"pattern",params:{pattern: "^v\\d+$"},message:"must match pattern \""+"^v\\d+$"+"\"",schema:"^v\\d+$",parentSchema:schema54.properties.version,data:data0};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
}
}
else {
const err3 = {instancePath:instancePath+"/version",schemaPath:"#/properties/version/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema54.properties.version.type,parentSchema:schema54.properties.version,data:data0};
if(vErrors === null){
vErrors = [err3];
}
else {
vErrors.push(err3);
}
errors++;
}
}
if(data.status !== undefined){
let data1 = data.status;
if(!((data1 === "current") || (data1 === "deprecated"))){
const err4 = {instancePath:instancePath+"/status",schemaPath:"#/properties/status/enum",keyword:"enum",params:{allowedValues: schema54.properties.status.enum},message:"must be equal to one of the allowed values",schema:schema54.properties.status.enum,parentSchema:schema54.properties.status,data:data1};
if(vErrors === null){
vErrors = [err4];
}
else {
vErrors.push(err4);
}
errors++;
}
}
if(data.released !== undefined){
let data2 = data.released;
if(typeof data2 !== "string"){
const err5 = {instancePath:instancePath+"/released",schemaPath:"#/properties/released/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema54.properties.released.type,parentSchema:schema54.properties.released,data:data2};
if(vErrors === null){
vErrors = [err5];
}
else {
vErrors.push(err5);
}
errors++;
}
}
if(data.since !== undefined){
let data3 = data.since;
if(typeof data3 !== "string"){
const err6 = {instancePath:instancePath+"/since",schemaPath:"#/properties/since/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema54.properties.since.type,parentSchema:schema54.properties.since,data:data3};
if(vErrors === null){
vErrors = [err6];
}
else {
vErrors.push(err6);
}
errors++;
}
}
if(data.sunset !== undefined){
let data4 = data.sunset;
if((typeof data4 !== "string") && (data4 !== null)){
const err7 = {instancePath:instancePath+"/sunset",schemaPath:"#/properties/sunset/type",keyword:"type",params:{type: schema54.properties.sunset.type},message:"must be string,null",schema:schema54.properties.sunset.type,parentSchema:schema54.properties.sunset,data:data4};
if(vErrors === null){
vErrors = [err7];
}
else {
vErrors.push(err7);
}
errors++;
}
}
if(data.link !== undefined){
let data5 = data.link;
if(typeof data5 !== "string"){
const err8 = {instancePath:instancePath+"/link",schemaPath:"#/properties/link/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema54.properties.link.type,parentSchema:schema54.properties.link,data:data5};
if(vErrors === null){
vErrors = [err8];
}
else {
vErrors.push(err8);
}
errors++;
}
}
if(data.successor !== undefined){
let data6 = data.successor;
if(typeof data6 !== "string"){
const err9 = {instancePath:instancePath+"/successor",schemaPath:"#/properties/successor/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema54.properties.successor.type,parentSchema:schema54.properties.successor,data:data6};
if(vErrors === null){
vErrors = [err9];
}
else {
vErrors.push(err9);
}
errors++;
}
}
if(data.successorLink !== undefined){
let data7 = data.successorLink;
if(typeof data7 !== "string"){
const err10 = {instancePath:instancePath+"/successorLink",schemaPath:"#/properties/successorLink/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema54.properties.successorLink.type,parentSchema:schema54.properties.successorLink,data:data7};
if(vErrors === null){
vErrors = [err10];
}
else {
vErrors.push(err10);
}
errors++;
}
}
if(data.decision !== undefined){
let data8 = data.decision;
if(typeof data8 !== "string"){
const err11 = {instancePath:instancePath+"/decision",schemaPath:"#/$defs/decision/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema36.type,parentSchema:schema36,data:data8};
if(vErrors === null){
vErrors = [err11];
}
else {
vErrors.push(err11);
}
errors++;
}
}
}
else {
const err12 = {instancePath,schemaPath:"#/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema54.type,parentSchema:schema54,data};
if(vErrors === null){
vErrors = [err12];
}
else {
vErrors.push(err12);
}
errors++;
}
validate33.errors = vErrors;
return errors === 0;
}
validate33.evaluated = {"props":true,"dynamicProps":false,"dynamicItems":false};

const schema56 = {"type":"object","required":["name"],"additionalProperties":false,"properties":{"name":{"type":"string","x-missing":"name: <its name>"},"description":{"type":"string"},"decision":{"$ref":"#/$defs/decision"}}};

function validate35(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){
let vErrors = null;
let errors = 0;
const evaluated0 = validate35.evaluated;
if(evaluated0.dynamicProps){
evaluated0.props = undefined;
}
if(evaluated0.dynamicItems){
evaluated0.items = undefined;
}
if(data && typeof data == "object" && !Array.isArray(data)){
if(data.name === undefined){
const err0 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "name"},message:"must have required property '"+"name"+"'",schema:schema56.required,parentSchema:schema56,data};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
for(const key0 in data){
if(!(((key0 === "name") || (key0 === "description")) || (key0 === "decision"))){
const err1 = {instancePath,schemaPath:"#/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties",schema:false,parentSchema:schema56,data};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
}
if(data.name !== undefined){
let data0 = data.name;
if(typeof data0 !== "string"){
const err2 = {instancePath:instancePath+"/name",schemaPath:"#/properties/name/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema56.properties.name.type,parentSchema:schema56.properties.name,data:data0};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
}
}
if(data.description !== undefined){
let data1 = data.description;
if(typeof data1 !== "string"){
const err3 = {instancePath:instancePath+"/description",schemaPath:"#/properties/description/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema56.properties.description.type,parentSchema:schema56.properties.description,data:data1};
if(vErrors === null){
vErrors = [err3];
}
else {
vErrors.push(err3);
}
errors++;
}
}
if(data.decision !== undefined){
let data2 = data.decision;
if(typeof data2 !== "string"){
const err4 = {instancePath:instancePath+"/decision",schemaPath:"#/$defs/decision/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema36.type,parentSchema:schema36,data:data2};
if(vErrors === null){
vErrors = [err4];
}
else {
vErrors.push(err4);
}
errors++;
}
}
}
else {
const err5 = {instancePath,schemaPath:"#/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema56.type,parentSchema:schema56,data};
if(vErrors === null){
vErrors = [err5];
}
else {
vErrors.push(err5);
}
errors++;
}
validate35.errors = vErrors;
return errors === 0;
}
validate35.evaluated = {"props":true,"dynamicProps":false,"dynamicItems":false};

const schema58 = {"type":"object","additionalProperties":false,"properties":{"labels":{"$ref":"#/$defs/uniqueStrings"},"scopes":{"description":"all, or a list of scopes.","type":["string","array"],"items":{"type":"string"},"if":{"type":"string"},"then":{"const":"all","x-fix":"Write scopes: all, or a list of scopes."}},"decision":{"$ref":"#/$defs/decision"}}};
const schema59 = {"type":"array","items":{"type":"string"},"uniqueItems":true};

function validate38(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){
let vErrors = null;
let errors = 0;
const evaluated0 = validate38.evaluated;
if(evaluated0.dynamicProps){
evaluated0.props = undefined;
}
if(evaluated0.dynamicItems){
evaluated0.items = undefined;
}
if(data && typeof data == "object" && !Array.isArray(data)){
for(const key0 in data){
if(!(((key0 === "labels") || (key0 === "scopes")) || (key0 === "decision"))){
const err0 = {instancePath,schemaPath:"#/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties",schema:false,parentSchema:schema58,data};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
}
if(data.labels !== undefined){
let data0 = data.labels;
if(Array.isArray(data0)){
const len0 = data0.length;
for(let i0=0; i0<len0; i0++){
let data1 = data0[i0];
if(typeof data1 !== "string"){
const err1 = {instancePath:instancePath+"/labels/" + i0,schemaPath:"#/$defs/uniqueStrings/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema59.items.type,parentSchema:schema59.items,data:data1};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
}
let i1 = data0.length;
let j0;
if(i1 > 1){
const indices0 = {};
for(;i1--;){
let item0 = data0[i1];
if(typeof item0 !== "string"){
continue;
}
if(typeof indices0[item0] == "number"){
j0 = indices0[item0];
const err2 = {instancePath:instancePath+"/labels",schemaPath:"#/$defs/uniqueStrings/uniqueItems",keyword:"uniqueItems",params:{i: i1, j: j0},message:"must NOT have duplicate items (items ## "+j0+" and "+i1+" are identical)",schema:true,parentSchema:schema59,data:data0};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
break;
}
indices0[item0] = i1;
}
}
}
else {
const err3 = {instancePath:instancePath+"/labels",schemaPath:"#/$defs/uniqueStrings/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema59.type,parentSchema:schema59,data:data0};
if(vErrors === null){
vErrors = [err3];
}
else {
vErrors.push(err3);
}
errors++;
}
}
if(data.scopes !== undefined){
let data2 = data.scopes;
if((typeof data2 !== "string") && (!(Array.isArray(data2)))){
const err4 = {instancePath:instancePath+"/scopes",schemaPath:"#/properties/scopes/type",keyword:"type",params:{type: schema58.properties.scopes.type},message:"must be string,array",schema:schema58.properties.scopes.type,parentSchema:schema58.properties.scopes,data:data2};
if(vErrors === null){
vErrors = [err4];
}
else {
vErrors.push(err4);
}
errors++;
}
const _errs9 = errors;
let valid5 = true;
const _errs10 = errors;
if(typeof data2 !== "string"){
const err5 = {};
if(vErrors === null){
vErrors = [err5];
}
else {
vErrors.push(err5);
}
errors++;
}
var _valid0 = _errs10 === errors;
errors = _errs9;
if(vErrors !== null){
if(_errs9){
vErrors.length = _errs9;
}
else {
vErrors = null;
}
}
if(_valid0){
const _errs12 = errors;
if("all" !== data2){
const err6 = {instancePath:instancePath+"/scopes",schemaPath:"#/properties/scopes/then/const",keyword:"const",params:{allowedValue: "all"},message:"must be equal to constant",schema:"all",parentSchema:schema58.properties.scopes.then,data:data2};
if(vErrors === null){
vErrors = [err6];
}
else {
vErrors.push(err6);
}
errors++;
}
var _valid0 = _errs12 === errors;
valid5 = _valid0;
}
if(!valid5){
const err7 = {instancePath:instancePath+"/scopes",schemaPath:"#/properties/scopes/if",keyword:"if",params:{failingKeyword: "then"},message:"must match \"then\" schema",schema:schema58.properties.scopes.if,parentSchema:schema58.properties.scopes,data:data2};
if(vErrors === null){
vErrors = [err7];
}
else {
vErrors.push(err7);
}
errors++;
}
if(Array.isArray(data2)){
const len1 = data2.length;
for(let i2=0; i2<len1; i2++){
let data3 = data2[i2];
if(typeof data3 !== "string"){
const err8 = {instancePath:instancePath+"/scopes/" + i2,schemaPath:"#/properties/scopes/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema58.properties.scopes.items.type,parentSchema:schema58.properties.scopes.items,data:data3};
if(vErrors === null){
vErrors = [err8];
}
else {
vErrors.push(err8);
}
errors++;
}
}
}
}
if(data.decision !== undefined){
let data4 = data.decision;
if(typeof data4 !== "string"){
const err9 = {instancePath:instancePath+"/decision",schemaPath:"#/$defs/decision/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema36.type,parentSchema:schema36,data:data4};
if(vErrors === null){
vErrors = [err9];
}
else {
vErrors.push(err9);
}
errors++;
}
}
}
else {
const err10 = {instancePath,schemaPath:"#/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema58.type,parentSchema:schema58,data};
if(vErrors === null){
vErrors = [err10];
}
else {
vErrors.push(err10);
}
errors++;
}
validate38.errors = vErrors;
return errors === 0;
}
validate38.evaluated = {"props":true,"dynamicProps":false,"dynamicItems":false};

const schema61 = {"x-rule":"invalid-problem","type":"object","required":["status","title","retry"],"additionalProperties":false,"properties":{"status":{"x-rule":"invalid-problem","type":"integer","minimum":400,"maximum":599,"x-missing":"status: <an HTTP error status, 400-599>","x-fix":"Give it an HTTP error status (400-599)."},"title":{"x-rule":"invalid-problem","type":"string","x-missing":"title: <one line saying what went wrong>"},"retry":{"x-rule":"invalid-problem","enum":["after_fix","after_delay","now"],"x-missing":"retry: after_fix (the same request fails until something changes), after_delay or now"},"retryAfter":{"x-rule":"invalid-problem","type":"number","minimum":0},"decision":{"$ref":"#/$defs/decision"}}};

function validate40(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){
let vErrors = null;
let errors = 0;
const evaluated0 = validate40.evaluated;
if(evaluated0.dynamicProps){
evaluated0.props = undefined;
}
if(evaluated0.dynamicItems){
evaluated0.items = undefined;
}
if(data && typeof data == "object" && !Array.isArray(data)){
if(data.status === undefined){
const err0 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "status"},message:"must have required property '"+"status"+"'",schema:schema61.required,parentSchema:schema61,data};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
if(data.title === undefined){
const err1 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "title"},message:"must have required property '"+"title"+"'",schema:schema61.required,parentSchema:schema61,data};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
if(data.retry === undefined){
const err2 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "retry"},message:"must have required property '"+"retry"+"'",schema:schema61.required,parentSchema:schema61,data};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
}
for(const key0 in data){
if(!(((((key0 === "status") || (key0 === "title")) || (key0 === "retry")) || (key0 === "retryAfter")) || (key0 === "decision"))){
const err3 = {instancePath,schemaPath:"#/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties",schema:false,parentSchema:schema61,data};
if(vErrors === null){
vErrors = [err3];
}
else {
vErrors.push(err3);
}
errors++;
}
}
if(data.status !== undefined){
let data0 = data.status;
if(!((typeof data0 == "number") && (!(data0 % 1) && !isNaN(data0)))){
const err4 = {instancePath:instancePath+"/status",schemaPath:"#/properties/status/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema61.properties.status.type,parentSchema:schema61.properties.status,data:data0};
if(vErrors === null){
vErrors = [err4];
}
else {
vErrors.push(err4);
}
errors++;
}
if(typeof data0 == "number"){
if(data0 > 599 || isNaN(data0)){
const err5 = {instancePath:instancePath+"/status",schemaPath:"#/properties/status/maximum",keyword:"maximum",params:{comparison: "<=", limit: 599},message:"must be <= 599",schema:599,parentSchema:schema61.properties.status,data:data0};
if(vErrors === null){
vErrors = [err5];
}
else {
vErrors.push(err5);
}
errors++;
}
if(data0 < 400 || isNaN(data0)){
const err6 = {instancePath:instancePath+"/status",schemaPath:"#/properties/status/minimum",keyword:"minimum",params:{comparison: ">=", limit: 400},message:"must be >= 400",schema:400,parentSchema:schema61.properties.status,data:data0};
if(vErrors === null){
vErrors = [err6];
}
else {
vErrors.push(err6);
}
errors++;
}
}
}
if(data.title !== undefined){
let data1 = data.title;
if(typeof data1 !== "string"){
const err7 = {instancePath:instancePath+"/title",schemaPath:"#/properties/title/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema61.properties.title.type,parentSchema:schema61.properties.title,data:data1};
if(vErrors === null){
vErrors = [err7];
}
else {
vErrors.push(err7);
}
errors++;
}
}
if(data.retry !== undefined){
let data2 = data.retry;
if(!(((data2 === "after_fix") || (data2 === "after_delay")) || (data2 === "now"))){
const err8 = {instancePath:instancePath+"/retry",schemaPath:"#/properties/retry/enum",keyword:"enum",params:{allowedValues: schema61.properties.retry.enum},message:"must be equal to one of the allowed values",schema:schema61.properties.retry.enum,parentSchema:schema61.properties.retry,data:data2};
if(vErrors === null){
vErrors = [err8];
}
else {
vErrors.push(err8);
}
errors++;
}
}
if(data.retryAfter !== undefined){
let data3 = data.retryAfter;
if(typeof data3 == "number"){
if(data3 < 0 || isNaN(data3)){
const err9 = {instancePath:instancePath+"/retryAfter",schemaPath:"#/properties/retryAfter/minimum",keyword:"minimum",params:{comparison: ">=", limit: 0},message:"must be >= 0",schema:0,parentSchema:schema61.properties.retryAfter,data:data3};
if(vErrors === null){
vErrors = [err9];
}
else {
vErrors.push(err9);
}
errors++;
}
}
else {
const err10 = {instancePath:instancePath+"/retryAfter",schemaPath:"#/properties/retryAfter/type",keyword:"type",params:{type: "number"},message:"must be number",schema:schema61.properties.retryAfter.type,parentSchema:schema61.properties.retryAfter,data:data3};
if(vErrors === null){
vErrors = [err10];
}
else {
vErrors.push(err10);
}
errors++;
}
}
if(data.decision !== undefined){
let data4 = data.decision;
if(typeof data4 !== "string"){
const err11 = {instancePath:instancePath+"/decision",schemaPath:"#/$defs/decision/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema36.type,parentSchema:schema36,data:data4};
if(vErrors === null){
vErrors = [err11];
}
else {
vErrors.push(err11);
}
errors++;
}
}
}
else {
const err12 = {instancePath,schemaPath:"#/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema61.type,parentSchema:schema61,data};
if(vErrors === null){
vErrors = [err12];
}
else {
vErrors.push(err12);
}
errors++;
}
validate40.errors = vErrors;
return errors === 0;
}
validate40.evaluated = {"props":true,"dynamicProps":false,"dynamicItems":false};

const schema64 = {"type":"object","required":["version","date"],"additionalProperties":false,"properties":{"version":{"$ref":"#/$defs/semver","x-missing":"version: <the release, e.g. 1.2.0>"},"date":{"$ref":"#/$defs/date","x-missing":"date: \"<YYYY-MM-DD>\""},"added":{"$ref":"#/$defs/strings"},"deprecated":{"$ref":"#/$defs/strings"},"removed":{"$ref":"#/$defs/strings"},"corrected":{"$ref":"#/$defs/strings"},"decision":{"$ref":"#/$defs/decision"}}};
const schema67 = {"type":"array","items":{"type":"string"}};

function validate43(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){
let vErrors = null;
let errors = 0;
const evaluated0 = validate43.evaluated;
if(evaluated0.dynamicProps){
evaluated0.props = undefined;
}
if(evaluated0.dynamicItems){
evaluated0.items = undefined;
}
if(data && typeof data == "object" && !Array.isArray(data)){
if(data.version === undefined){
const err0 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "version"},message:"must have required property '"+"version"+"'",schema:schema64.required,parentSchema:schema64,data};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
if(data.date === undefined){
const err1 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "date"},message:"must have required property '"+"date"+"'",schema:schema64.required,parentSchema:schema64,data};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
for(const key0 in data){
if(!(((((((key0 === "version") || (key0 === "date")) || (key0 === "added")) || (key0 === "deprecated")) || (key0 === "removed")) || (key0 === "corrected")) || (key0 === "decision"))){
const err2 = {instancePath,schemaPath:"#/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties",schema:false,parentSchema:schema64,data};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
}
}
if(data.version !== undefined){
let data0 = data.version;
if(typeof data0 === "string"){
if(!pattern4.test(data0)){
const err3 = {instancePath:instancePath+"/version",schemaPath:"#/$defs/semver/pattern",keyword:"pattern",params:{pattern: "^\\d+\\.\\d+\\.\\d+$"},message:"must match pattern \""+"^\\d+\\.\\d+\\.\\d+$"+"\"",schema:"^\\d+\\.\\d+\\.\\d+$",parentSchema:schema34,data:data0};
if(vErrors === null){
vErrors = [err3];
}
else {
vErrors.push(err3);
}
errors++;
}
}
else {
const err4 = {instancePath:instancePath+"/version",schemaPath:"#/$defs/semver/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema34.type,parentSchema:schema34,data:data0};
if(vErrors === null){
vErrors = [err4];
}
else {
vErrors.push(err4);
}
errors++;
}
}
if(data.date !== undefined){
let data1 = data.date;
if(typeof data1 === "string"){
if(!(formats0.validate(data1))){
const err5 = {instancePath:instancePath+"/date",schemaPath:"#/$defs/date/format",keyword:"format",params:{format: "date"},message:"must match format \""+"date"+"\"",schema:"date",parentSchema:schema35,data:data1};
if(vErrors === null){
vErrors = [err5];
}
else {
vErrors.push(err5);
}
errors++;
}
}
else {
const err6 = {instancePath:instancePath+"/date",schemaPath:"#/$defs/date/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema35.type,parentSchema:schema35,data:data1};
if(vErrors === null){
vErrors = [err6];
}
else {
vErrors.push(err6);
}
errors++;
}
}
if(data.added !== undefined){
let data2 = data.added;
if(Array.isArray(data2)){
const len0 = data2.length;
for(let i0=0; i0<len0; i0++){
let data3 = data2[i0];
if(typeof data3 !== "string"){
const err7 = {instancePath:instancePath+"/added/" + i0,schemaPath:"#/$defs/strings/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema67.items.type,parentSchema:schema67.items,data:data3};
if(vErrors === null){
vErrors = [err7];
}
else {
vErrors.push(err7);
}
errors++;
}
}
}
else {
const err8 = {instancePath:instancePath+"/added",schemaPath:"#/$defs/strings/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema67.type,parentSchema:schema67,data:data2};
if(vErrors === null){
vErrors = [err8];
}
else {
vErrors.push(err8);
}
errors++;
}
}
if(data.deprecated !== undefined){
let data4 = data.deprecated;
if(Array.isArray(data4)){
const len1 = data4.length;
for(let i1=0; i1<len1; i1++){
let data5 = data4[i1];
if(typeof data5 !== "string"){
const err9 = {instancePath:instancePath+"/deprecated/" + i1,schemaPath:"#/$defs/strings/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema67.items.type,parentSchema:schema67.items,data:data5};
if(vErrors === null){
vErrors = [err9];
}
else {
vErrors.push(err9);
}
errors++;
}
}
}
else {
const err10 = {instancePath:instancePath+"/deprecated",schemaPath:"#/$defs/strings/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema67.type,parentSchema:schema67,data:data4};
if(vErrors === null){
vErrors = [err10];
}
else {
vErrors.push(err10);
}
errors++;
}
}
if(data.removed !== undefined){
let data6 = data.removed;
if(Array.isArray(data6)){
const len2 = data6.length;
for(let i2=0; i2<len2; i2++){
let data7 = data6[i2];
if(typeof data7 !== "string"){
const err11 = {instancePath:instancePath+"/removed/" + i2,schemaPath:"#/$defs/strings/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema67.items.type,parentSchema:schema67.items,data:data7};
if(vErrors === null){
vErrors = [err11];
}
else {
vErrors.push(err11);
}
errors++;
}
}
}
else {
const err12 = {instancePath:instancePath+"/removed",schemaPath:"#/$defs/strings/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema67.type,parentSchema:schema67,data:data6};
if(vErrors === null){
vErrors = [err12];
}
else {
vErrors.push(err12);
}
errors++;
}
}
if(data.corrected !== undefined){
let data8 = data.corrected;
if(Array.isArray(data8)){
const len3 = data8.length;
for(let i3=0; i3<len3; i3++){
let data9 = data8[i3];
if(typeof data9 !== "string"){
const err13 = {instancePath:instancePath+"/corrected/" + i3,schemaPath:"#/$defs/strings/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema67.items.type,parentSchema:schema67.items,data:data9};
if(vErrors === null){
vErrors = [err13];
}
else {
vErrors.push(err13);
}
errors++;
}
}
}
else {
const err14 = {instancePath:instancePath+"/corrected",schemaPath:"#/$defs/strings/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema67.type,parentSchema:schema67,data:data8};
if(vErrors === null){
vErrors = [err14];
}
else {
vErrors.push(err14);
}
errors++;
}
}
if(data.decision !== undefined){
let data10 = data.decision;
if(typeof data10 !== "string"){
const err15 = {instancePath:instancePath+"/decision",schemaPath:"#/$defs/decision/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema36.type,parentSchema:schema36,data:data10};
if(vErrors === null){
vErrors = [err15];
}
else {
vErrors.push(err15);
}
errors++;
}
}
}
else {
const err16 = {instancePath,schemaPath:"#/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema64.type,parentSchema:schema64,data};
if(vErrors === null){
vErrors = [err16];
}
else {
vErrors.push(err16);
}
errors++;
}
validate43.errors = vErrors;
return errors === 0;
}
validate43.evaluated = {"props":true,"dynamicProps":false,"dynamicItems":false};

const pattern5 = new RegExp("^\\d{4}-\\d{2}-\\d{2}$", "u");
const pattern6 = new RegExp("^[A-Za-z][A-Za-z0-9_-]{0,31}$", "u");
const pattern7 = new RegExp("^[A-Za-z][A-Za-z0-9-]{0,63}$", "u");
const pattern9 = new RegExp("^[a-z][a-z0-9_]*$", "u");

function validate21(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){
let vErrors = null;
let errors = 0;
const evaluated0 = validate21.evaluated;
if(evaluated0.dynamicProps){
evaluated0.props = undefined;
}
if(evaluated0.dynamicItems){
evaluated0.items = undefined;
}
if(data && typeof data == "object" && !Array.isArray(data)){
if(data.info === undefined){
const err0 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "info"},message:"must have required property '"+"info"+"'",schema:schema32.required,parentSchema:schema32,data};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
if(data.totals === undefined){
const err1 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "totals"},message:"must have required property '"+"totals"+"'",schema:schema32.required,parentSchema:schema32,data};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
for(const key0 in data){
if(!(func1.call(schema32.properties, key0))){
const err2 = {instancePath,schemaPath:"#/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties",schema:false,parentSchema:schema32,data};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
}
}
if(data.info !== undefined){
if(!(validate22(data.info, {instancePath:instancePath+"/info",parentData:data,parentDataProperty:"info",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate22.errors : vErrors.concat(validate22.errors);
errors = vErrors.length;
}
}
if(data.totals !== undefined){
if(!(validate24(data.totals, {instancePath:instancePath+"/totals",parentData:data,parentDataProperty:"totals",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate24.errors : vErrors.concat(validate24.errors);
errors = vErrors.length;
}
}
if(data.mcpProtocolVersions !== undefined){
let data2 = data.mcpProtocolVersions;
if(Array.isArray(data2)){
const len0 = data2.length;
for(let i0=0; i0<len0; i0++){
let data3 = data2[i0];
if(typeof data3 === "string"){
if(!pattern5.test(data3)){
const err3 = {instancePath:instancePath+"/mcpProtocolVersions/" + i0,schemaPath:"#/properties/mcpProtocolVersions/items/pattern",keyword:"pattern",params:{pattern: "^\\d{4}-\\d{2}-\\d{2}$"},message:"must match pattern \""+"^\\d{4}-\\d{2}-\\d{2}$"+"\"",schema:"^\\d{4}-\\d{2}-\\d{2}$",parentSchema:schema32.properties.mcpProtocolVersions.items,data:data3};
if(vErrors === null){
vErrors = [err3];
}
else {
vErrors.push(err3);
}
errors++;
}
}
else {
const err4 = {instancePath:instancePath+"/mcpProtocolVersions/" + i0,schemaPath:"#/properties/mcpProtocolVersions/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema32.properties.mcpProtocolVersions.items.type,parentSchema:schema32.properties.mcpProtocolVersions.items,data:data3};
if(vErrors === null){
vErrors = [err4];
}
else {
vErrors.push(err4);
}
errors++;
}
}
let i1 = data2.length;
let j0;
if(i1 > 1){
const indices0 = {};
for(;i1--;){
let item0 = data2[i1];
if(typeof item0 !== "string"){
continue;
}
if(typeof indices0[item0] == "number"){
j0 = indices0[item0];
const err5 = {instancePath:instancePath+"/mcpProtocolVersions",schemaPath:"#/properties/mcpProtocolVersions/uniqueItems",keyword:"uniqueItems",params:{i: i1, j: j0},message:"must NOT have duplicate items (items ## "+j0+" and "+i1+" are identical)",schema:true,parentSchema:schema32.properties.mcpProtocolVersions,data:data2};
if(vErrors === null){
vErrors = [err5];
}
else {
vErrors.push(err5);
}
errors++;
break;
}
indices0[item0] = i1;
}
}
}
else {
const err6 = {instancePath:instancePath+"/mcpProtocolVersions",schemaPath:"#/properties/mcpProtocolVersions/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema32.properties.mcpProtocolVersions.type,parentSchema:schema32.properties.mcpProtocolVersions,data:data2};
if(vErrors === null){
vErrors = [err6];
}
else {
vErrors.push(err6);
}
errors++;
}
}
if(data.mcpDynamic !== undefined){
if(!(validate26(data.mcpDynamic, {instancePath:instancePath+"/mcpDynamic",parentData:data,parentDataProperty:"mcpDynamic",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate26.errors : vErrors.concat(validate26.errors);
errors = vErrors.length;
}
}
if(data.mcpToolPrefix !== undefined){
let data5 = data.mcpToolPrefix;
if(typeof data5 === "string"){
if(!pattern6.test(data5)){
const err7 = {instancePath:instancePath+"/mcpToolPrefix",schemaPath:"#/properties/mcpToolPrefix/pattern",keyword:"pattern",params:{pattern: "^[A-Za-z][A-Za-z0-9_-]{0,31}$"},message:"must match pattern \""+"^[A-Za-z][A-Za-z0-9_-]{0,31}$"+"\"",schema:"^[A-Za-z][A-Za-z0-9_-]{0,31}$",parentSchema:schema32.properties.mcpToolPrefix,data:data5};
if(vErrors === null){
vErrors = [err7];
}
else {
vErrors.push(err7);
}
errors++;
}
}
else {
const err8 = {instancePath:instancePath+"/mcpToolPrefix",schemaPath:"#/properties/mcpToolPrefix/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema32.properties.mcpToolPrefix.type,parentSchema:schema32.properties.mcpToolPrefix,data:data5};
if(vErrors === null){
vErrors = [err8];
}
else {
vErrors.push(err8);
}
errors++;
}
}
if(data.guideExamples !== undefined){
let data6 = data.guideExamples;
if(data6 && typeof data6 == "object" && !Array.isArray(data6)){
for(const key1 in data6){
if(!((((key1 === "list") || (key1 === "create")) || (key1 === "body")) || (key1 === "decision"))){
const err9 = {instancePath:instancePath+"/guideExamples",schemaPath:"#/properties/guideExamples/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key1},message:"must NOT have additional properties",schema:false,parentSchema:schema32.properties.guideExamples,data:data6};
if(vErrors === null){
vErrors = [err9];
}
else {
vErrors.push(err9);
}
errors++;
}
}
if(data6.list !== undefined){
let data7 = data6.list;
if(typeof data7 !== "string"){
const err10 = {instancePath:instancePath+"/guideExamples/list",schemaPath:"#/properties/guideExamples/properties/list/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema32.properties.guideExamples.properties.list.type,parentSchema:schema32.properties.guideExamples.properties.list,data:data7};
if(vErrors === null){
vErrors = [err10];
}
else {
vErrors.push(err10);
}
errors++;
}
}
if(data6.create !== undefined){
let data8 = data6.create;
if(typeof data8 !== "string"){
const err11 = {instancePath:instancePath+"/guideExamples/create",schemaPath:"#/properties/guideExamples/properties/create/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema32.properties.guideExamples.properties.create.type,parentSchema:schema32.properties.guideExamples.properties.create,data:data8};
if(vErrors === null){
vErrors = [err11];
}
else {
vErrors.push(err11);
}
errors++;
}
}
if(data6.body !== undefined){
let data9 = data6.body;
if(!(data9 && typeof data9 == "object" && !Array.isArray(data9))){
const err12 = {instancePath:instancePath+"/guideExamples/body",schemaPath:"#/properties/guideExamples/properties/body/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema32.properties.guideExamples.properties.body.type,parentSchema:schema32.properties.guideExamples.properties.body,data:data9};
if(vErrors === null){
vErrors = [err12];
}
else {
vErrors.push(err12);
}
errors++;
}
}
if(data6.decision !== undefined){
let data10 = data6.decision;
if(typeof data10 !== "string"){
const err13 = {instancePath:instancePath+"/guideExamples/decision",schemaPath:"#/$defs/decision/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema36.type,parentSchema:schema36,data:data10};
if(vErrors === null){
vErrors = [err13];
}
else {
vErrors.push(err13);
}
errors++;
}
}
}
else {
const err14 = {instancePath:instancePath+"/guideExamples",schemaPath:"#/properties/guideExamples/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema32.properties.guideExamples.type,parentSchema:schema32.properties.guideExamples,data:data6};
if(vErrors === null){
vErrors = [err14];
}
else {
vErrors.push(err14);
}
errors++;
}
}
if(data.personalData !== undefined){
let data11 = data.personalData;
if(data11 && typeof data11 == "object" && !Array.isArray(data11)){
if(data11.scope === undefined){
const err15 = {instancePath:instancePath+"/personalData",schemaPath:"#/properties/personalData/required",keyword:"required",params:{missingProperty: "scope"},message:"must have required property '"+"scope"+"'",schema:schema32.properties.personalData.required,parentSchema:schema32.properties.personalData,data:data11};
if(vErrors === null){
vErrors = [err15];
}
else {
vErrors.push(err15);
}
errors++;
}
for(const key2 in data11){
if(!((key2 === "scope") || (key2 === "decision"))){
const err16 = {instancePath:instancePath+"/personalData",schemaPath:"#/properties/personalData/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key2},message:"must NOT have additional properties",schema:false,parentSchema:schema32.properties.personalData,data:data11};
if(vErrors === null){
vErrors = [err16];
}
else {
vErrors.push(err16);
}
errors++;
}
}
if(data11.scope !== undefined){
let data12 = data11.scope;
if(typeof data12 !== "string"){
const err17 = {instancePath:instancePath+"/personalData/scope",schemaPath:"#/properties/personalData/properties/scope/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema32.properties.personalData.properties.scope.type,parentSchema:schema32.properties.personalData.properties.scope,data:data12};
if(vErrors === null){
vErrors = [err17];
}
else {
vErrors.push(err17);
}
errors++;
}
}
if(data11.decision !== undefined){
let data13 = data11.decision;
if(typeof data13 !== "string"){
const err18 = {instancePath:instancePath+"/personalData/decision",schemaPath:"#/$defs/decision/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema36.type,parentSchema:schema36,data:data13};
if(vErrors === null){
vErrors = [err18];
}
else {
vErrors.push(err18);
}
errors++;
}
}
}
else {
const err19 = {instancePath:instancePath+"/personalData",schemaPath:"#/properties/personalData/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema32.properties.personalData.type,parentSchema:schema32.properties.personalData,data:data11};
if(vErrors === null){
vErrors = [err19];
}
else {
vErrors.push(err19);
}
errors++;
}
}
if(data.features !== undefined){
let data14 = data.features;
if(data14 && typeof data14 == "object" && !Array.isArray(data14)){
for(const key3 in data14){
if(!(((key3 === "clientTenancy") || (key3 === "approvals")) || (key3 === "decision"))){
const err20 = {instancePath:instancePath+"/features",schemaPath:"#/properties/features/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key3},message:"must NOT have additional properties",schema:false,parentSchema:schema32.properties.features,data:data14};
if(vErrors === null){
vErrors = [err20];
}
else {
vErrors.push(err20);
}
errors++;
}
}
if(data14.clientTenancy !== undefined){
let data15 = data14.clientTenancy;
if(typeof data15 !== "boolean"){
const err21 = {instancePath:instancePath+"/features/clientTenancy",schemaPath:"#/properties/features/properties/clientTenancy/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema32.properties.features.properties.clientTenancy.type,parentSchema:schema32.properties.features.properties.clientTenancy,data:data15};
if(vErrors === null){
vErrors = [err21];
}
else {
vErrors.push(err21);
}
errors++;
}
}
if(data14.approvals !== undefined){
let data16 = data14.approvals;
if(typeof data16 !== "boolean"){
const err22 = {instancePath:instancePath+"/features/approvals",schemaPath:"#/properties/features/properties/approvals/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema32.properties.features.properties.approvals.type,parentSchema:schema32.properties.features.properties.approvals,data:data16};
if(vErrors === null){
vErrors = [err22];
}
else {
vErrors.push(err22);
}
errors++;
}
}
if(data14.decision !== undefined){
let data17 = data14.decision;
if(typeof data17 !== "string"){
const err23 = {instancePath:instancePath+"/features/decision",schemaPath:"#/$defs/decision/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema36.type,parentSchema:schema36,data:data17};
if(vErrors === null){
vErrors = [err23];
}
else {
vErrors.push(err23);
}
errors++;
}
}
}
else {
const err24 = {instancePath:instancePath+"/features",schemaPath:"#/properties/features/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema32.properties.features.type,parentSchema:schema32.properties.features,data:data14};
if(vErrors === null){
vErrors = [err24];
}
else {
vErrors.push(err24);
}
errors++;
}
}
if(data.apiVersionHeader !== undefined){
let data18 = data.apiVersionHeader;
if(typeof data18 === "string"){
if(!pattern7.test(data18)){
const err25 = {instancePath:instancePath+"/apiVersionHeader",schemaPath:"#/properties/apiVersionHeader/pattern",keyword:"pattern",params:{pattern: "^[A-Za-z][A-Za-z0-9-]{0,63}$"},message:"must match pattern \""+"^[A-Za-z][A-Za-z0-9-]{0,63}$"+"\"",schema:"^[A-Za-z][A-Za-z0-9-]{0,63}$",parentSchema:schema32.properties.apiVersionHeader,data:data18};
if(vErrors === null){
vErrors = [err25];
}
else {
vErrors.push(err25);
}
errors++;
}
}
else {
const err26 = {instancePath:instancePath+"/apiVersionHeader",schemaPath:"#/properties/apiVersionHeader/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema32.properties.apiVersionHeader.type,parentSchema:schema32.properties.apiVersionHeader,data:data18};
if(vErrors === null){
vErrors = [err26];
}
else {
vErrors.push(err26);
}
errors++;
}
}
if(data.versions !== undefined){
let data19 = data.versions;
if(Array.isArray(data19)){
const len1 = data19.length;
for(let i2=0; i2<len1; i2++){
if(!(validate33(data19[i2], {instancePath:instancePath+"/versions/" + i2,parentData:data19,parentDataProperty:i2,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate33.errors : vErrors.concat(validate33.errors);
errors = vErrors.length;
}
}
}
else {
const err27 = {instancePath:instancePath+"/versions",schemaPath:"#/properties/versions/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema32.properties.versions.type,parentSchema:schema32.properties.versions,data:data19};
if(vErrors === null){
vErrors = [err27];
}
else {
vErrors.push(err27);
}
errors++;
}
}
if(data.scopes !== undefined){
let data21 = data.scopes;
if(Array.isArray(data21)){
const len2 = data21.length;
for(let i3=0; i3<len2; i3++){
if(!(validate35(data21[i3], {instancePath:instancePath+"/scopes/" + i3,parentData:data21,parentDataProperty:i3,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate35.errors : vErrors.concat(validate35.errors);
errors = vErrors.length;
}
}
}
else {
const err28 = {instancePath:instancePath+"/scopes",schemaPath:"#/properties/scopes/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema32.properties.scopes.type,parentSchema:schema32.properties.scopes,data:data21};
if(vErrors === null){
vErrors = [err28];
}
else {
vErrors.push(err28);
}
errors++;
}
}
if(data.principals !== undefined){
let data23 = data.principals;
if(Array.isArray(data23)){
const len3 = data23.length;
for(let i4=0; i4<len3; i4++){
if(!(validate35(data23[i4], {instancePath:instancePath+"/principals/" + i4,parentData:data23,parentDataProperty:i4,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate35.errors : vErrors.concat(validate35.errors);
errors = vErrors.length;
}
}
}
else {
const err29 = {instancePath:instancePath+"/principals",schemaPath:"#/properties/principals/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema32.properties.principals.type,parentSchema:schema32.properties.principals,data:data23};
if(vErrors === null){
vErrors = [err29];
}
else {
vErrors.push(err29);
}
errors++;
}
}
if(data.roles !== undefined){
let data25 = data.roles;
if(data25 && typeof data25 == "object" && !Array.isArray(data25)){
for(const key4 in data25){
if(!(validate38(data25[key4], {instancePath:instancePath+"/roles/" + key4.replace(/~/g, "~0").replace(/\//g, "~1"),parentData:data25,parentDataProperty:key4,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate38.errors : vErrors.concat(validate38.errors);
errors = vErrors.length;
}
}
}
else {
const err30 = {instancePath:instancePath+"/roles",schemaPath:"#/properties/roles/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema32.properties.roles.type,parentSchema:schema32.properties.roles,data:data25};
if(vErrors === null){
vErrors = [err30];
}
else {
vErrors.push(err30);
}
errors++;
}
}
if(data.problems !== undefined){
let data27 = data.problems;
if(data27 && typeof data27 == "object" && !Array.isArray(data27)){
for(const key5 in data27){
const _errs58 = errors;
if(typeof key5 === "string"){
if(!pattern9.test(key5)){
const err31 = {instancePath:instancePath+"/problems",schemaPath:"#/properties/problems/propertyNames/pattern",keyword:"pattern",params:{pattern: "^[a-z][a-z0-9_]*$"},message:"must match pattern \""+"^[a-z][a-z0-9_]*$"+"\"",schema:"^[a-z][a-z0-9_]*$",parentSchema:schema32.properties.problems.propertyNames,data:key5,propertyName:key5};
if(vErrors === null){
vErrors = [err31];
}
else {
vErrors.push(err31);
}
errors++;
}
}
var valid17 = _errs58 === errors;
if(!valid17){
const err32 = {instancePath:instancePath+"/problems",schemaPath:"#/properties/problems/propertyNames",keyword:"propertyNames",params:{propertyName: key5},message:"property name must be valid",schema:schema32.properties.problems.propertyNames,parentSchema:schema32.properties.problems,data:data27};
if(vErrors === null){
vErrors = [err32];
}
else {
vErrors.push(err32);
}
errors++;
}
}
for(const key6 in data27){
if(!(validate40(data27[key6], {instancePath:instancePath+"/problems/" + key6.replace(/~/g, "~0").replace(/\//g, "~1"),parentData:data27,parentDataProperty:key6,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate40.errors : vErrors.concat(validate40.errors);
errors = vErrors.length;
}
}
}
else {
const err33 = {instancePath:instancePath+"/problems",schemaPath:"#/properties/problems/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema32.properties.problems.type,parentSchema:schema32.properties.problems,data:data27};
if(vErrors === null){
vErrors = [err33];
}
else {
vErrors.push(err33);
}
errors++;
}
}
if(data.eventTypes !== undefined){
let data29 = data.eventTypes;
if(Array.isArray(data29)){
const len4 = data29.length;
for(let i5=0; i5<len4; i5++){
if(!(validate35(data29[i5], {instancePath:instancePath+"/eventTypes/" + i5,parentData:data29,parentDataProperty:i5,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate35.errors : vErrors.concat(validate35.errors);
errors = vErrors.length;
}
}
}
else {
const err34 = {instancePath:instancePath+"/eventTypes",schemaPath:"#/properties/eventTypes/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema32.properties.eventTypes.type,parentSchema:schema32.properties.eventTypes,data:data29};
if(vErrors === null){
vErrors = [err34];
}
else {
vErrors.push(err34);
}
errors++;
}
}
if(data.limits !== undefined){
let data31 = data.limits;
if(data31 && typeof data31 == "object" && !Array.isArray(data31)){
for(const key7 in data31){
if(!(key7 === "decision")){
let data32 = data31[key7];
if(!(typeof data32 == "number")){
const err35 = {instancePath:instancePath+"/limits/" + key7.replace(/~/g, "~0").replace(/\//g, "~1"),schemaPath:"#/properties/limits/additionalProperties/type",keyword:"type",params:{type: "number"},message:"must be number",schema:schema32.properties.limits.additionalProperties.type,parentSchema:schema32.properties.limits.additionalProperties,data:data32};
if(vErrors === null){
vErrors = [err35];
}
else {
vErrors.push(err35);
}
errors++;
}
}
}
if(data31.decision !== undefined){
let data33 = data31.decision;
if(typeof data33 !== "string"){
const err36 = {instancePath:instancePath+"/limits/decision",schemaPath:"#/$defs/decision/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema36.type,parentSchema:schema36,data:data33};
if(vErrors === null){
vErrors = [err36];
}
else {
vErrors.push(err36);
}
errors++;
}
}
}
else {
const err37 = {instancePath:instancePath+"/limits",schemaPath:"#/properties/limits/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema32.properties.limits.type,parentSchema:schema32.properties.limits,data:data31};
if(vErrors === null){
vErrors = [err37];
}
else {
vErrors.push(err37);
}
errors++;
}
}
if(data.changelog !== undefined){
let data34 = data.changelog;
if(Array.isArray(data34)){
const len5 = data34.length;
for(let i6=0; i6<len5; i6++){
if(!(validate43(data34[i6], {instancePath:instancePath+"/changelog/" + i6,parentData:data34,parentDataProperty:i6,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate43.errors : vErrors.concat(validate43.errors);
errors = vErrors.length;
}
}
}
else {
const err38 = {instancePath:instancePath+"/changelog",schemaPath:"#/properties/changelog/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema32.properties.changelog.type,parentSchema:schema32.properties.changelog,data:data34};
if(vErrors === null){
vErrors = [err38];
}
else {
vErrors.push(err38);
}
errors++;
}
}
}
else {
const err39 = {instancePath,schemaPath:"#/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema32.type,parentSchema:schema32,data};
if(vErrors === null){
vErrors = [err39];
}
else {
vErrors.push(err39);
}
errors++;
}
validate21.errors = vErrors;
return errors === 0;
}
validate21.evaluated = {"props":true,"dynamicProps":false,"dynamicItems":false};

export const schemasFile = validate45;
const schema72 = {"title":"contract/schemas/*.yaml","description":"Named JSON Schemas: Name -> schema. Names are PascalCase and unique across the files.","type":"object","propertyNames":{"x-rule":"invalid-schema-name","pattern":"^[A-Z][A-Za-z0-9]*$","x-expect":"a PascalCase schema name","x-fix":"Rename it (e.g. TaskDraft)."},"additionalProperties":{"$ref":"schema"}};
const pattern11 = new RegExp("^[A-Z][A-Za-z0-9]*$", "u");

function validate45(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){
let vErrors = null;
let errors = 0;
const evaluated0 = validate45.evaluated;
if(evaluated0.dynamicProps){
evaluated0.props = undefined;
}
if(evaluated0.dynamicItems){
evaluated0.items = undefined;
}
if(data && typeof data == "object" && !Array.isArray(data)){
for(const key0 in data){
const _errs1 = errors;
if(typeof key0 === "string"){
if(!pattern11.test(key0)){
const err0 = {instancePath,schemaPath:"#/propertyNames/pattern",keyword:"pattern",params:{pattern: "^[A-Z][A-Za-z0-9]*$"},message:"must match pattern \""+"^[A-Z][A-Za-z0-9]*$"+"\"",schema:"^[A-Z][A-Za-z0-9]*$",parentSchema:schema72.propertyNames,data:key0,propertyName:key0};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
}
var valid0 = _errs1 === errors;
if(!valid0){
const err1 = {instancePath,schemaPath:"#/propertyNames",keyword:"propertyNames",params:{propertyName: key0},message:"property name must be valid",schema:schema72.propertyNames,parentSchema:schema72,data};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
}
for(const key1 in data){
if(!(validate28(data[key1], {instancePath:instancePath+"/" + key1.replace(/~/g, "~0").replace(/\//g, "~1"),parentData:data,parentDataProperty:key1,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate28.errors : vErrors.concat(validate28.errors);
errors = vErrors.length;
}
}
}
else {
const err2 = {instancePath,schemaPath:"#/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema72.type,parentSchema:schema72,data};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
}
validate45.errors = vErrors;
return errors === 0;
}
validate45.evaluated = {"props":true,"dynamicProps":false,"dynamicItems":false};

export const familyFile = validate47;
const schema73 = {"title":"contract/families/<family>.yaml","description":"One family and its operations.","type":"object","required":["family","operations"],"additionalProperties":false,"properties":{"family":{"type":"string","pattern":"^[a-z][a-z0-9_]*$","x-expect":"a family name in lower snake_case","x-missing":"family: <the file's name without .yaml> at the top"},"description":{"type":"string"},"operations":{"type":"array","items":{"$ref":"#/$defs/operation"},"x-missing":"operations: [...] (the family's operations)"},"decision":{"$ref":"#/$defs/decision"}}};
const schema74 = {"description":"One operation: REST route, MCP tool (or the reason it is not one), input, output and rules. contract/README.md shows every key with its meaning.","type":"object","required":["id","summary","kind","scope","audience","http","input","mcp"],"additionalProperties":false,"properties":{"id":{"x-rule":"unknown-operation-id-shape","type":"string","pattern":"^[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*)+$","x-expect":"<family>.<name>[.<name>] in lower snake_case","x-fix":"Rename it, e.g. tasks.create or webhooks.endpoint.rotate_secret.","x-missing":"id: <family>.<name>"},"summary":{"type":"string","pattern":"\\S","x-expect":"a one-line summary","x-missing":"summary: <one line saying what it does>"},"description":{"type":"string"},"kind":{"x-rule":"invalid-kind","enum":["read","command"],"x-missing":"kind: read or kind: command"},"tier":{"x-rule":"invalid-tier","enum":[1,2,3,null],"x-fix":"Use tier 1 (runs at once), 2 or 3 (becomes a proposal); reads have none."},"scope":{"type":["string","null"],"x-missing":"scope: <a scope from svc.yaml>, or scope: null for any credential"},"audience":{"type":"array","minItems":1,"uniqueItems":true,"items":{"type":"string"},"x-missing":"audience: [operator, client_admin, service_account] (the principals that may call it)"},"http":{"$ref":"#/$defs/http","x-missing":"http: { method: GET, path: /v1/... }"},"input":{"$ref":"schema","x-missing":"input: {properties: {...}} (input: {properties: {}} when it takes none)"},"output":{"$ref":"schema"},"result":{"$ref":"schema"},"page":{"$ref":"schema"},"stream":{"enum":["sse"]},"idempotency":{"enum":["required","honoured","none"]},"ifMatch":{"enum":["required","none"]},"errors":{"$ref":"#/$defs/uniqueStrings"},"emits":{"$ref":"#/$defs/uniqueStrings"},"mcp":{"$ref":"#/$defs/mcp","x-missing":"mcp: {tool: true, ...} or mcp: {tool: false, reason: \"<why agents do not get it>\"}"},"deprecated":{"$ref":"#/$defs/deprecation"},"decision":{"$ref":"#/$defs/decision"},"subject":{"x-rule":"invalid-subject","type":"object","additionalProperties":false,"properties":{"resource":{"type":"string"},"from":{"type":"string"},"none":{"type":"string"}}},"final":{"type":"boolean"}}};
const pattern13 = new RegExp("^[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*)+$", "u");
const pattern14 = new RegExp("\\S", "u");
const schema75 = {"type":"object","required":["method","path"],"additionalProperties":false,"properties":{"method":{"x-rule":"invalid-method","enum":["GET","POST","PATCH","PUT","DELETE"],"x-missing":"method: GET (or POST, PATCH, PUT, DELETE)"},"path":{"x-rule":"invalid-path","type":"string","pattern":"^/","x-expect":"an absolute path","x-fix":"Write an absolute path such as /v1/tasks/{task_id}.","x-missing":"path: /v1/..."},"status":{"x-rule":"invalid-status","type":"integer","minimum":200,"maximum":299,"x-fix":"Use a 2xx status (200, or 201 for creating POSTs)."},"query":{"$ref":"#/$defs/uniqueStrings"},"decision":{"$ref":"#/$defs/decision"}}};
const pattern15 = new RegExp("^/", "u");

function validate49(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){
let vErrors = null;
let errors = 0;
const evaluated0 = validate49.evaluated;
if(evaluated0.dynamicProps){
evaluated0.props = undefined;
}
if(evaluated0.dynamicItems){
evaluated0.items = undefined;
}
if(data && typeof data == "object" && !Array.isArray(data)){
if(data.method === undefined){
const err0 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "method"},message:"must have required property '"+"method"+"'",schema:schema75.required,parentSchema:schema75,data};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
if(data.path === undefined){
const err1 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "path"},message:"must have required property '"+"path"+"'",schema:schema75.required,parentSchema:schema75,data};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
for(const key0 in data){
if(!(((((key0 === "method") || (key0 === "path")) || (key0 === "status")) || (key0 === "query")) || (key0 === "decision"))){
const err2 = {instancePath,schemaPath:"#/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties",schema:false,parentSchema:schema75,data};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
}
}
if(data.method !== undefined){
let data0 = data.method;
if(!(((((data0 === "GET") || (data0 === "POST")) || (data0 === "PATCH")) || (data0 === "PUT")) || (data0 === "DELETE"))){
const err3 = {instancePath:instancePath+"/method",schemaPath:"#/properties/method/enum",keyword:"enum",params:{allowedValues: schema75.properties.method.enum},message:"must be equal to one of the allowed values",schema:schema75.properties.method.enum,parentSchema:schema75.properties.method,data:data0};
if(vErrors === null){
vErrors = [err3];
}
else {
vErrors.push(err3);
}
errors++;
}
}
if(data.path !== undefined){
let data1 = data.path;
if(typeof data1 === "string"){
if(!pattern15.test(data1)){
const err4 = {instancePath:instancePath+"/path",schemaPath:"#/properties/path/pattern",keyword:"pattern",params:{pattern: "^/"},message:"must match pattern \""+"^/"+"\"",schema:"^/",parentSchema:schema75.properties.path,data:data1};
if(vErrors === null){
vErrors = [err4];
}
else {
vErrors.push(err4);
}
errors++;
}
}
else {
const err5 = {instancePath:instancePath+"/path",schemaPath:"#/properties/path/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema75.properties.path.type,parentSchema:schema75.properties.path,data:data1};
if(vErrors === null){
vErrors = [err5];
}
else {
vErrors.push(err5);
}
errors++;
}
}
if(data.status !== undefined){
let data2 = data.status;
if(!((typeof data2 == "number") && (!(data2 % 1) && !isNaN(data2)))){
const err6 = {instancePath:instancePath+"/status",schemaPath:"#/properties/status/type",keyword:"type",params:{type: "integer"},message:"must be integer",schema:schema75.properties.status.type,parentSchema:schema75.properties.status,data:data2};
if(vErrors === null){
vErrors = [err6];
}
else {
vErrors.push(err6);
}
errors++;
}
if(typeof data2 == "number"){
if(data2 > 299 || isNaN(data2)){
const err7 = {instancePath:instancePath+"/status",schemaPath:"#/properties/status/maximum",keyword:"maximum",params:{comparison: "<=", limit: 299},message:"must be <= 299",schema:299,parentSchema:schema75.properties.status,data:data2};
if(vErrors === null){
vErrors = [err7];
}
else {
vErrors.push(err7);
}
errors++;
}
if(data2 < 200 || isNaN(data2)){
const err8 = {instancePath:instancePath+"/status",schemaPath:"#/properties/status/minimum",keyword:"minimum",params:{comparison: ">=", limit: 200},message:"must be >= 200",schema:200,parentSchema:schema75.properties.status,data:data2};
if(vErrors === null){
vErrors = [err8];
}
else {
vErrors.push(err8);
}
errors++;
}
}
}
if(data.query !== undefined){
let data3 = data.query;
if(Array.isArray(data3)){
const len0 = data3.length;
for(let i0=0; i0<len0; i0++){
let data4 = data3[i0];
if(typeof data4 !== "string"){
const err9 = {instancePath:instancePath+"/query/" + i0,schemaPath:"#/$defs/uniqueStrings/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema59.items.type,parentSchema:schema59.items,data:data4};
if(vErrors === null){
vErrors = [err9];
}
else {
vErrors.push(err9);
}
errors++;
}
}
let i1 = data3.length;
let j0;
if(i1 > 1){
const indices0 = {};
for(;i1--;){
let item0 = data3[i1];
if(typeof item0 !== "string"){
continue;
}
if(typeof indices0[item0] == "number"){
j0 = indices0[item0];
const err10 = {instancePath:instancePath+"/query",schemaPath:"#/$defs/uniqueStrings/uniqueItems",keyword:"uniqueItems",params:{i: i1, j: j0},message:"must NOT have duplicate items (items ## "+j0+" and "+i1+" are identical)",schema:true,parentSchema:schema59,data:data3};
if(vErrors === null){
vErrors = [err10];
}
else {
vErrors.push(err10);
}
errors++;
break;
}
indices0[item0] = i1;
}
}
}
else {
const err11 = {instancePath:instancePath+"/query",schemaPath:"#/$defs/uniqueStrings/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema59.type,parentSchema:schema59,data:data3};
if(vErrors === null){
vErrors = [err11];
}
else {
vErrors.push(err11);
}
errors++;
}
}
if(data.decision !== undefined){
let data5 = data.decision;
if(typeof data5 !== "string"){
const err12 = {instancePath:instancePath+"/decision",schemaPath:"#/$defs/decision/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema36.type,parentSchema:schema36,data:data5};
if(vErrors === null){
vErrors = [err12];
}
else {
vErrors.push(err12);
}
errors++;
}
}
}
else {
const err13 = {instancePath,schemaPath:"#/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema75.type,parentSchema:schema75,data};
if(vErrors === null){
vErrors = [err13];
}
else {
vErrors.push(err13);
}
errors++;
}
validate49.errors = vErrors;
return errors === 0;
}
validate49.evaluated = {"props":true,"dynamicProps":false,"dynamicItems":false};

const schema80 = {"type":"object","required":["tool"],"additionalProperties":false,"properties":{"tool":{"type":"boolean","x-missing":"tool: true (an MCP tool) or tool: false (with a reason)"},"reason":{"type":"string"},"destructive":{"type":"boolean"},"idempotent":{"type":"boolean"},"openWorld":{"type":"boolean"},"decision":{"$ref":"#/$defs/decision"}}};

function validate55(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){
let vErrors = null;
let errors = 0;
const evaluated0 = validate55.evaluated;
if(evaluated0.dynamicProps){
evaluated0.props = undefined;
}
if(evaluated0.dynamicItems){
evaluated0.items = undefined;
}
if(data && typeof data == "object" && !Array.isArray(data)){
if(data.tool === undefined){
const err0 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "tool"},message:"must have required property '"+"tool"+"'",schema:schema80.required,parentSchema:schema80,data};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
for(const key0 in data){
if(!((((((key0 === "tool") || (key0 === "reason")) || (key0 === "destructive")) || (key0 === "idempotent")) || (key0 === "openWorld")) || (key0 === "decision"))){
const err1 = {instancePath,schemaPath:"#/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties",schema:false,parentSchema:schema80,data};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
}
if(data.tool !== undefined){
let data0 = data.tool;
if(typeof data0 !== "boolean"){
const err2 = {instancePath:instancePath+"/tool",schemaPath:"#/properties/tool/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema80.properties.tool.type,parentSchema:schema80.properties.tool,data:data0};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
}
}
if(data.reason !== undefined){
let data1 = data.reason;
if(typeof data1 !== "string"){
const err3 = {instancePath:instancePath+"/reason",schemaPath:"#/properties/reason/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema80.properties.reason.type,parentSchema:schema80.properties.reason,data:data1};
if(vErrors === null){
vErrors = [err3];
}
else {
vErrors.push(err3);
}
errors++;
}
}
if(data.destructive !== undefined){
let data2 = data.destructive;
if(typeof data2 !== "boolean"){
const err4 = {instancePath:instancePath+"/destructive",schemaPath:"#/properties/destructive/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema80.properties.destructive.type,parentSchema:schema80.properties.destructive,data:data2};
if(vErrors === null){
vErrors = [err4];
}
else {
vErrors.push(err4);
}
errors++;
}
}
if(data.idempotent !== undefined){
let data3 = data.idempotent;
if(typeof data3 !== "boolean"){
const err5 = {instancePath:instancePath+"/idempotent",schemaPath:"#/properties/idempotent/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema80.properties.idempotent.type,parentSchema:schema80.properties.idempotent,data:data3};
if(vErrors === null){
vErrors = [err5];
}
else {
vErrors.push(err5);
}
errors++;
}
}
if(data.openWorld !== undefined){
let data4 = data.openWorld;
if(typeof data4 !== "boolean"){
const err6 = {instancePath:instancePath+"/openWorld",schemaPath:"#/properties/openWorld/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema80.properties.openWorld.type,parentSchema:schema80.properties.openWorld,data:data4};
if(vErrors === null){
vErrors = [err6];
}
else {
vErrors.push(err6);
}
errors++;
}
}
if(data.decision !== undefined){
let data5 = data.decision;
if(typeof data5 !== "string"){
const err7 = {instancePath:instancePath+"/decision",schemaPath:"#/$defs/decision/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema36.type,parentSchema:schema36,data:data5};
if(vErrors === null){
vErrors = [err7];
}
else {
vErrors.push(err7);
}
errors++;
}
}
}
else {
const err8 = {instancePath,schemaPath:"#/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema80.type,parentSchema:schema80,data};
if(vErrors === null){
vErrors = [err8];
}
else {
vErrors.push(err8);
}
errors++;
}
validate55.errors = vErrors;
return errors === 0;
}
validate55.evaluated = {"props":true,"dynamicProps":false,"dynamicItems":false};

const schema82 = {"description":"{since, sunset, link, successor, successorLink}; null or false when not deprecated.","type":["object","null","boolean"],"additionalProperties":false,"properties":{"since":{"type":"string"},"sunset":{"type":["string","null"]},"link":{"type":"string"},"successor":{"type":"string"},"successorLink":{"type":"string"},"decision":{"$ref":"#/$defs/decision"}}};

function validate57(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){
let vErrors = null;
let errors = 0;
const evaluated0 = validate57.evaluated;
if(evaluated0.dynamicProps){
evaluated0.props = undefined;
}
if(evaluated0.dynamicItems){
evaluated0.items = undefined;
}
if(((!(data && typeof data == "object" && !Array.isArray(data))) && (data !== null)) && (typeof data !== "boolean")){
const err0 = {instancePath,schemaPath:"#/type",keyword:"type",params:{type: schema82.type},message:"must be object,null,boolean",schema:schema82.type,parentSchema:schema82,data};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
if(data && typeof data == "object" && !Array.isArray(data)){
for(const key0 in data){
if(!((((((key0 === "since") || (key0 === "sunset")) || (key0 === "link")) || (key0 === "successor")) || (key0 === "successorLink")) || (key0 === "decision"))){
const err1 = {instancePath,schemaPath:"#/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties",schema:false,parentSchema:schema82,data};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
}
if(data.since !== undefined){
let data0 = data.since;
if(typeof data0 !== "string"){
const err2 = {instancePath:instancePath+"/since",schemaPath:"#/properties/since/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema82.properties.since.type,parentSchema:schema82.properties.since,data:data0};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
}
}
if(data.sunset !== undefined){
let data1 = data.sunset;
if((typeof data1 !== "string") && (data1 !== null)){
const err3 = {instancePath:instancePath+"/sunset",schemaPath:"#/properties/sunset/type",keyword:"type",params:{type: schema82.properties.sunset.type},message:"must be string,null",schema:schema82.properties.sunset.type,parentSchema:schema82.properties.sunset,data:data1};
if(vErrors === null){
vErrors = [err3];
}
else {
vErrors.push(err3);
}
errors++;
}
}
if(data.link !== undefined){
let data2 = data.link;
if(typeof data2 !== "string"){
const err4 = {instancePath:instancePath+"/link",schemaPath:"#/properties/link/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema82.properties.link.type,parentSchema:schema82.properties.link,data:data2};
if(vErrors === null){
vErrors = [err4];
}
else {
vErrors.push(err4);
}
errors++;
}
}
if(data.successor !== undefined){
let data3 = data.successor;
if(typeof data3 !== "string"){
const err5 = {instancePath:instancePath+"/successor",schemaPath:"#/properties/successor/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema82.properties.successor.type,parentSchema:schema82.properties.successor,data:data3};
if(vErrors === null){
vErrors = [err5];
}
else {
vErrors.push(err5);
}
errors++;
}
}
if(data.successorLink !== undefined){
let data4 = data.successorLink;
if(typeof data4 !== "string"){
const err6 = {instancePath:instancePath+"/successorLink",schemaPath:"#/properties/successorLink/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema82.properties.successorLink.type,parentSchema:schema82.properties.successorLink,data:data4};
if(vErrors === null){
vErrors = [err6];
}
else {
vErrors.push(err6);
}
errors++;
}
}
if(data.decision !== undefined){
let data5 = data.decision;
if(typeof data5 !== "string"){
const err7 = {instancePath:instancePath+"/decision",schemaPath:"#/$defs/decision/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema36.type,parentSchema:schema36,data:data5};
if(vErrors === null){
vErrors = [err7];
}
else {
vErrors.push(err7);
}
errors++;
}
}
}
validate57.errors = vErrors;
return errors === 0;
}
validate57.evaluated = {"props":true,"dynamicProps":false,"dynamicItems":false};


function validate48(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){
let vErrors = null;
let errors = 0;
const evaluated0 = validate48.evaluated;
if(evaluated0.dynamicProps){
evaluated0.props = undefined;
}
if(evaluated0.dynamicItems){
evaluated0.items = undefined;
}
if(data && typeof data == "object" && !Array.isArray(data)){
if(data.id === undefined){
const err0 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "id"},message:"must have required property '"+"id"+"'",schema:schema74.required,parentSchema:schema74,data};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
if(data.summary === undefined){
const err1 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "summary"},message:"must have required property '"+"summary"+"'",schema:schema74.required,parentSchema:schema74,data};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
if(data.kind === undefined){
const err2 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "kind"},message:"must have required property '"+"kind"+"'",schema:schema74.required,parentSchema:schema74,data};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
}
if(data.scope === undefined){
const err3 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "scope"},message:"must have required property '"+"scope"+"'",schema:schema74.required,parentSchema:schema74,data};
if(vErrors === null){
vErrors = [err3];
}
else {
vErrors.push(err3);
}
errors++;
}
if(data.audience === undefined){
const err4 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "audience"},message:"must have required property '"+"audience"+"'",schema:schema74.required,parentSchema:schema74,data};
if(vErrors === null){
vErrors = [err4];
}
else {
vErrors.push(err4);
}
errors++;
}
if(data.http === undefined){
const err5 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "http"},message:"must have required property '"+"http"+"'",schema:schema74.required,parentSchema:schema74,data};
if(vErrors === null){
vErrors = [err5];
}
else {
vErrors.push(err5);
}
errors++;
}
if(data.input === undefined){
const err6 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "input"},message:"must have required property '"+"input"+"'",schema:schema74.required,parentSchema:schema74,data};
if(vErrors === null){
vErrors = [err6];
}
else {
vErrors.push(err6);
}
errors++;
}
if(data.mcp === undefined){
const err7 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "mcp"},message:"must have required property '"+"mcp"+"'",schema:schema74.required,parentSchema:schema74,data};
if(vErrors === null){
vErrors = [err7];
}
else {
vErrors.push(err7);
}
errors++;
}
for(const key0 in data){
if(!(func1.call(schema74.properties, key0))){
const err8 = {instancePath,schemaPath:"#/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties",schema:false,parentSchema:schema74,data};
if(vErrors === null){
vErrors = [err8];
}
else {
vErrors.push(err8);
}
errors++;
}
}
if(data.id !== undefined){
let data0 = data.id;
if(typeof data0 === "string"){
if(!pattern13.test(data0)){
const err9 = {instancePath:instancePath+"/id",schemaPath:"#/properties/id/pattern",keyword:"pattern",params:{pattern: "^[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*)+$"},message:"must match pattern \""+"^[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*)+$"+"\"",schema:"^[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*)+$",parentSchema:schema74.properties.id,data:data0};
if(vErrors === null){
vErrors = [err9];
}
else {
vErrors.push(err9);
}
errors++;
}
}
else {
const err10 = {instancePath:instancePath+"/id",schemaPath:"#/properties/id/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema74.properties.id.type,parentSchema:schema74.properties.id,data:data0};
if(vErrors === null){
vErrors = [err10];
}
else {
vErrors.push(err10);
}
errors++;
}
}
if(data.summary !== undefined){
let data1 = data.summary;
if(typeof data1 === "string"){
if(!pattern14.test(data1)){
const err11 = {instancePath:instancePath+"/summary",schemaPath:"#/properties/summary/pattern",keyword:"pattern",params:{pattern: "\\S"},message:"must match pattern \""+"\\S"+"\"",schema:"\\S",parentSchema:schema74.properties.summary,data:data1};
if(vErrors === null){
vErrors = [err11];
}
else {
vErrors.push(err11);
}
errors++;
}
}
else {
const err12 = {instancePath:instancePath+"/summary",schemaPath:"#/properties/summary/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema74.properties.summary.type,parentSchema:schema74.properties.summary,data:data1};
if(vErrors === null){
vErrors = [err12];
}
else {
vErrors.push(err12);
}
errors++;
}
}
if(data.description !== undefined){
let data2 = data.description;
if(typeof data2 !== "string"){
const err13 = {instancePath:instancePath+"/description",schemaPath:"#/properties/description/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema74.properties.description.type,parentSchema:schema74.properties.description,data:data2};
if(vErrors === null){
vErrors = [err13];
}
else {
vErrors.push(err13);
}
errors++;
}
}
if(data.kind !== undefined){
let data3 = data.kind;
if(!((data3 === "read") || (data3 === "command"))){
const err14 = {instancePath:instancePath+"/kind",schemaPath:"#/properties/kind/enum",keyword:"enum",params:{allowedValues: schema74.properties.kind.enum},message:"must be equal to one of the allowed values",schema:schema74.properties.kind.enum,parentSchema:schema74.properties.kind,data:data3};
if(vErrors === null){
vErrors = [err14];
}
else {
vErrors.push(err14);
}
errors++;
}
}
if(data.tier !== undefined){
let data4 = data.tier;
if(!((((data4 === 1) || (data4 === 2)) || (data4 === 3)) || (data4 === null))){
const err15 = {instancePath:instancePath+"/tier",schemaPath:"#/properties/tier/enum",keyword:"enum",params:{allowedValues: schema74.properties.tier.enum},message:"must be equal to one of the allowed values",schema:schema74.properties.tier.enum,parentSchema:schema74.properties.tier,data:data4};
if(vErrors === null){
vErrors = [err15];
}
else {
vErrors.push(err15);
}
errors++;
}
}
if(data.scope !== undefined){
let data5 = data.scope;
if((typeof data5 !== "string") && (data5 !== null)){
const err16 = {instancePath:instancePath+"/scope",schemaPath:"#/properties/scope/type",keyword:"type",params:{type: schema74.properties.scope.type},message:"must be string,null",schema:schema74.properties.scope.type,parentSchema:schema74.properties.scope,data:data5};
if(vErrors === null){
vErrors = [err16];
}
else {
vErrors.push(err16);
}
errors++;
}
}
if(data.audience !== undefined){
let data6 = data.audience;
if(Array.isArray(data6)){
if(data6.length < 1){
const err17 = {instancePath:instancePath+"/audience",schemaPath:"#/properties/audience/minItems",keyword:"minItems",params:{limit: 1},message:"must NOT have fewer than 1 items",schema:1,parentSchema:schema74.properties.audience,data:data6};
if(vErrors === null){
vErrors = [err17];
}
else {
vErrors.push(err17);
}
errors++;
}
const len0 = data6.length;
for(let i0=0; i0<len0; i0++){
let data7 = data6[i0];
if(typeof data7 !== "string"){
const err18 = {instancePath:instancePath+"/audience/" + i0,schemaPath:"#/properties/audience/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema74.properties.audience.items.type,parentSchema:schema74.properties.audience.items,data:data7};
if(vErrors === null){
vErrors = [err18];
}
else {
vErrors.push(err18);
}
errors++;
}
}
let i1 = data6.length;
let j0;
if(i1 > 1){
const indices0 = {};
for(;i1--;){
let item0 = data6[i1];
if(typeof item0 !== "string"){
continue;
}
if(typeof indices0[item0] == "number"){
j0 = indices0[item0];
const err19 = {instancePath:instancePath+"/audience",schemaPath:"#/properties/audience/uniqueItems",keyword:"uniqueItems",params:{i: i1, j: j0},message:"must NOT have duplicate items (items ## "+j0+" and "+i1+" are identical)",schema:true,parentSchema:schema74.properties.audience,data:data6};
if(vErrors === null){
vErrors = [err19];
}
else {
vErrors.push(err19);
}
errors++;
break;
}
indices0[item0] = i1;
}
}
}
else {
const err20 = {instancePath:instancePath+"/audience",schemaPath:"#/properties/audience/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema74.properties.audience.type,parentSchema:schema74.properties.audience,data:data6};
if(vErrors === null){
vErrors = [err20];
}
else {
vErrors.push(err20);
}
errors++;
}
}
if(data.http !== undefined){
if(!(validate49(data.http, {instancePath:instancePath+"/http",parentData:data,parentDataProperty:"http",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate49.errors : vErrors.concat(validate49.errors);
errors = vErrors.length;
}
}
if(data.input !== undefined){
if(!(validate28(data.input, {instancePath:instancePath+"/input",parentData:data,parentDataProperty:"input",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate28.errors : vErrors.concat(validate28.errors);
errors = vErrors.length;
}
}
if(data.output !== undefined){
if(!(validate28(data.output, {instancePath:instancePath+"/output",parentData:data,parentDataProperty:"output",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate28.errors : vErrors.concat(validate28.errors);
errors = vErrors.length;
}
}
if(data.result !== undefined){
if(!(validate28(data.result, {instancePath:instancePath+"/result",parentData:data,parentDataProperty:"result",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate28.errors : vErrors.concat(validate28.errors);
errors = vErrors.length;
}
}
if(data.page !== undefined){
if(!(validate28(data.page, {instancePath:instancePath+"/page",parentData:data,parentDataProperty:"page",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate28.errors : vErrors.concat(validate28.errors);
errors = vErrors.length;
}
}
if(data.stream !== undefined){
let data13 = data.stream;
if(!(data13 === "sse")){
const err21 = {instancePath:instancePath+"/stream",schemaPath:"#/properties/stream/enum",keyword:"enum",params:{allowedValues: schema74.properties.stream.enum},message:"must be equal to one of the allowed values",schema:schema74.properties.stream.enum,parentSchema:schema74.properties.stream,data:data13};
if(vErrors === null){
vErrors = [err21];
}
else {
vErrors.push(err21);
}
errors++;
}
}
if(data.idempotency !== undefined){
let data14 = data.idempotency;
if(!(((data14 === "required") || (data14 === "honoured")) || (data14 === "none"))){
const err22 = {instancePath:instancePath+"/idempotency",schemaPath:"#/properties/idempotency/enum",keyword:"enum",params:{allowedValues: schema74.properties.idempotency.enum},message:"must be equal to one of the allowed values",schema:schema74.properties.idempotency.enum,parentSchema:schema74.properties.idempotency,data:data14};
if(vErrors === null){
vErrors = [err22];
}
else {
vErrors.push(err22);
}
errors++;
}
}
if(data.ifMatch !== undefined){
let data15 = data.ifMatch;
if(!((data15 === "required") || (data15 === "none"))){
const err23 = {instancePath:instancePath+"/ifMatch",schemaPath:"#/properties/ifMatch/enum",keyword:"enum",params:{allowedValues: schema74.properties.ifMatch.enum},message:"must be equal to one of the allowed values",schema:schema74.properties.ifMatch.enum,parentSchema:schema74.properties.ifMatch,data:data15};
if(vErrors === null){
vErrors = [err23];
}
else {
vErrors.push(err23);
}
errors++;
}
}
if(data.errors !== undefined){
let data16 = data.errors;
if(Array.isArray(data16)){
const len1 = data16.length;
for(let i2=0; i2<len1; i2++){
let data17 = data16[i2];
if(typeof data17 !== "string"){
const err24 = {instancePath:instancePath+"/errors/" + i2,schemaPath:"#/$defs/uniqueStrings/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema59.items.type,parentSchema:schema59.items,data:data17};
if(vErrors === null){
vErrors = [err24];
}
else {
vErrors.push(err24);
}
errors++;
}
}
let i3 = data16.length;
let j1;
if(i3 > 1){
const indices1 = {};
for(;i3--;){
let item1 = data16[i3];
if(typeof item1 !== "string"){
continue;
}
if(typeof indices1[item1] == "number"){
j1 = indices1[item1];
const err25 = {instancePath:instancePath+"/errors",schemaPath:"#/$defs/uniqueStrings/uniqueItems",keyword:"uniqueItems",params:{i: i3, j: j1},message:"must NOT have duplicate items (items ## "+j1+" and "+i3+" are identical)",schema:true,parentSchema:schema59,data:data16};
if(vErrors === null){
vErrors = [err25];
}
else {
vErrors.push(err25);
}
errors++;
break;
}
indices1[item1] = i3;
}
}
}
else {
const err26 = {instancePath:instancePath+"/errors",schemaPath:"#/$defs/uniqueStrings/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema59.type,parentSchema:schema59,data:data16};
if(vErrors === null){
vErrors = [err26];
}
else {
vErrors.push(err26);
}
errors++;
}
}
if(data.emits !== undefined){
let data18 = data.emits;
if(Array.isArray(data18)){
const len2 = data18.length;
for(let i4=0; i4<len2; i4++){
let data19 = data18[i4];
if(typeof data19 !== "string"){
const err27 = {instancePath:instancePath+"/emits/" + i4,schemaPath:"#/$defs/uniqueStrings/items/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema59.items.type,parentSchema:schema59.items,data:data19};
if(vErrors === null){
vErrors = [err27];
}
else {
vErrors.push(err27);
}
errors++;
}
}
let i5 = data18.length;
let j2;
if(i5 > 1){
const indices2 = {};
for(;i5--;){
let item2 = data18[i5];
if(typeof item2 !== "string"){
continue;
}
if(typeof indices2[item2] == "number"){
j2 = indices2[item2];
const err28 = {instancePath:instancePath+"/emits",schemaPath:"#/$defs/uniqueStrings/uniqueItems",keyword:"uniqueItems",params:{i: i5, j: j2},message:"must NOT have duplicate items (items ## "+j2+" and "+i5+" are identical)",schema:true,parentSchema:schema59,data:data18};
if(vErrors === null){
vErrors = [err28];
}
else {
vErrors.push(err28);
}
errors++;
break;
}
indices2[item2] = i5;
}
}
}
else {
const err29 = {instancePath:instancePath+"/emits",schemaPath:"#/$defs/uniqueStrings/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema59.type,parentSchema:schema59,data:data18};
if(vErrors === null){
vErrors = [err29];
}
else {
vErrors.push(err29);
}
errors++;
}
}
if(data.mcp !== undefined){
if(!(validate55(data.mcp, {instancePath:instancePath+"/mcp",parentData:data,parentDataProperty:"mcp",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate55.errors : vErrors.concat(validate55.errors);
errors = vErrors.length;
}
}
if(data.deprecated !== undefined){
if(!(validate57(data.deprecated, {instancePath:instancePath+"/deprecated",parentData:data,parentDataProperty:"deprecated",rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate57.errors : vErrors.concat(validate57.errors);
errors = vErrors.length;
}
}
if(data.decision !== undefined){
let data22 = data.decision;
if(typeof data22 !== "string"){
const err30 = {instancePath:instancePath+"/decision",schemaPath:"#/$defs/decision/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema36.type,parentSchema:schema36,data:data22};
if(vErrors === null){
vErrors = [err30];
}
else {
vErrors.push(err30);
}
errors++;
}
}
if(data.subject !== undefined){
let data23 = data.subject;
if(data23 && typeof data23 == "object" && !Array.isArray(data23)){
for(const key1 in data23){
if(!(((key1 === "resource") || (key1 === "from")) || (key1 === "none"))){
const err31 = {instancePath:instancePath+"/subject",schemaPath:"#/properties/subject/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key1},message:"must NOT have additional properties",schema:false,parentSchema:schema74.properties.subject,data:data23};
if(vErrors === null){
vErrors = [err31];
}
else {
vErrors.push(err31);
}
errors++;
}
}
if(data23.resource !== undefined){
let data24 = data23.resource;
if(typeof data24 !== "string"){
const err32 = {instancePath:instancePath+"/subject/resource",schemaPath:"#/properties/subject/properties/resource/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema74.properties.subject.properties.resource.type,parentSchema:schema74.properties.subject.properties.resource,data:data24};
if(vErrors === null){
vErrors = [err32];
}
else {
vErrors.push(err32);
}
errors++;
}
}
if(data23.from !== undefined){
let data25 = data23.from;
if(typeof data25 !== "string"){
const err33 = {instancePath:instancePath+"/subject/from",schemaPath:"#/properties/subject/properties/from/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema74.properties.subject.properties.from.type,parentSchema:schema74.properties.subject.properties.from,data:data25};
if(vErrors === null){
vErrors = [err33];
}
else {
vErrors.push(err33);
}
errors++;
}
}
if(data23.none !== undefined){
let data26 = data23.none;
if(typeof data26 !== "string"){
const err34 = {instancePath:instancePath+"/subject/none",schemaPath:"#/properties/subject/properties/none/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema74.properties.subject.properties.none.type,parentSchema:schema74.properties.subject.properties.none,data:data26};
if(vErrors === null){
vErrors = [err34];
}
else {
vErrors.push(err34);
}
errors++;
}
}
}
else {
const err35 = {instancePath:instancePath+"/subject",schemaPath:"#/properties/subject/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema74.properties.subject.type,parentSchema:schema74.properties.subject,data:data23};
if(vErrors === null){
vErrors = [err35];
}
else {
vErrors.push(err35);
}
errors++;
}
}
if(data.final !== undefined){
let data27 = data.final;
if(typeof data27 !== "boolean"){
const err36 = {instancePath:instancePath+"/final",schemaPath:"#/properties/final/type",keyword:"type",params:{type: "boolean"},message:"must be boolean",schema:schema74.properties.final.type,parentSchema:schema74.properties.final,data:data27};
if(vErrors === null){
vErrors = [err36];
}
else {
vErrors.push(err36);
}
errors++;
}
}
}
else {
const err37 = {instancePath,schemaPath:"#/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema74.type,parentSchema:schema74,data};
if(vErrors === null){
vErrors = [err37];
}
else {
vErrors.push(err37);
}
errors++;
}
validate48.errors = vErrors;
return errors === 0;
}
validate48.evaluated = {"props":true,"dynamicProps":false,"dynamicItems":false};


function validate47(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){
let vErrors = null;
let errors = 0;
const evaluated0 = validate47.evaluated;
if(evaluated0.dynamicProps){
evaluated0.props = undefined;
}
if(evaluated0.dynamicItems){
evaluated0.items = undefined;
}
if(data && typeof data == "object" && !Array.isArray(data)){
if(data.family === undefined){
const err0 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "family"},message:"must have required property '"+"family"+"'",schema:schema73.required,parentSchema:schema73,data};
if(vErrors === null){
vErrors = [err0];
}
else {
vErrors.push(err0);
}
errors++;
}
if(data.operations === undefined){
const err1 = {instancePath,schemaPath:"#/required",keyword:"required",params:{missingProperty: "operations"},message:"must have required property '"+"operations"+"'",schema:schema73.required,parentSchema:schema73,data};
if(vErrors === null){
vErrors = [err1];
}
else {
vErrors.push(err1);
}
errors++;
}
for(const key0 in data){
if(!((((key0 === "family") || (key0 === "description")) || (key0 === "operations")) || (key0 === "decision"))){
const err2 = {instancePath,schemaPath:"#/additionalProperties",keyword:"additionalProperties",params:{additionalProperty: key0},message:"must NOT have additional properties",schema:false,parentSchema:schema73,data};
if(vErrors === null){
vErrors = [err2];
}
else {
vErrors.push(err2);
}
errors++;
}
}
if(data.family !== undefined){
let data0 = data.family;
if(typeof data0 === "string"){
if(!pattern9.test(data0)){
const err3 = {instancePath:instancePath+"/family",schemaPath:"#/properties/family/pattern",keyword:"pattern",params:{pattern: "^[a-z][a-z0-9_]*$"},message:"must match pattern \""+"^[a-z][a-z0-9_]*$"+"\"",schema:"^[a-z][a-z0-9_]*$",parentSchema:schema73.properties.family,data:data0};
if(vErrors === null){
vErrors = [err3];
}
else {
vErrors.push(err3);
}
errors++;
}
}
else {
const err4 = {instancePath:instancePath+"/family",schemaPath:"#/properties/family/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema73.properties.family.type,parentSchema:schema73.properties.family,data:data0};
if(vErrors === null){
vErrors = [err4];
}
else {
vErrors.push(err4);
}
errors++;
}
}
if(data.description !== undefined){
let data1 = data.description;
if(typeof data1 !== "string"){
const err5 = {instancePath:instancePath+"/description",schemaPath:"#/properties/description/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema73.properties.description.type,parentSchema:schema73.properties.description,data:data1};
if(vErrors === null){
vErrors = [err5];
}
else {
vErrors.push(err5);
}
errors++;
}
}
if(data.operations !== undefined){
let data2 = data.operations;
if(Array.isArray(data2)){
const len0 = data2.length;
for(let i0=0; i0<len0; i0++){
if(!(validate48(data2[i0], {instancePath:instancePath+"/operations/" + i0,parentData:data2,parentDataProperty:i0,rootData,dynamicAnchors}))){
vErrors = vErrors === null ? validate48.errors : vErrors.concat(validate48.errors);
errors = vErrors.length;
}
}
}
else {
const err6 = {instancePath:instancePath+"/operations",schemaPath:"#/properties/operations/type",keyword:"type",params:{type: "array"},message:"must be array",schema:schema73.properties.operations.type,parentSchema:schema73.properties.operations,data:data2};
if(vErrors === null){
vErrors = [err6];
}
else {
vErrors.push(err6);
}
errors++;
}
}
if(data.decision !== undefined){
let data4 = data.decision;
if(typeof data4 !== "string"){
const err7 = {instancePath:instancePath+"/decision",schemaPath:"#/$defs/decision/type",keyword:"type",params:{type: "string"},message:"must be string",schema:schema36.type,parentSchema:schema36,data:data4};
if(vErrors === null){
vErrors = [err7];
}
else {
vErrors.push(err7);
}
errors++;
}
}
}
else {
const err8 = {instancePath,schemaPath:"#/type",keyword:"type",params:{type: "object"},message:"must be object",schema:schema73.type,parentSchema:schema73,data};
if(vErrors === null){
vErrors = [err8];
}
else {
vErrors.push(err8);
}
errors++;
}
validate47.errors = vErrors;
return errors === 0;
}
validate47.evaluated = {"props":true,"dynamicProps":false,"dynamicItems":false};

