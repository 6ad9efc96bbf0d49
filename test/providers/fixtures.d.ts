declare module "virtual:provider-fixtures" {
  /** Fixture path → file bytes in base64. */
  const files: Record<string, string>;
  export default files;
}
