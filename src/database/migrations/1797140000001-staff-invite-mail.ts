import { MigrationInterface, QueryRunner } from 'typeorm';

/** The invitation of a new staff member is mailed as kind `staff_invite` (docs/mail.md, Kinds). */
export class StaffInviteMail1797140000001 implements MigrationInterface {
  name = 'StaffInviteMail1797140000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE mail_messages DROP CONSTRAINT mail_messages_kind_check, ADD CONSTRAINT mail_messages_kind_check
      CHECK (kind IN ('license_issued', 'expiring_soon', 'expired', 'seat_released', 'portal_sign_in', 'staff_invite'))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM mail_messages WHERE kind = 'staff_invite'`);
    await q.query(`ALTER TABLE mail_messages DROP CONSTRAINT mail_messages_kind_check, ADD CONSTRAINT mail_messages_kind_check
      CHECK (kind IN ('license_issued', 'expiring_soon', 'expired', 'seat_released', 'portal_sign_in'))`);
  }
}
