/** The signed-in session as the API answers it (POST /sessions, GET /sessions/current). */
export interface Session {
  account: { id: string; name: string };
  email: string;
  csrf_token: string;
  created_on: string;
  expires_on: string;
}
