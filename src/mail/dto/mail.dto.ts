import { ApiProperty } from '@nestjs/swagger';
import { MAIL_KINDS, type MailKind } from '../../config/app-config';
import { PageQueryDto } from '../../common/http/page-query.dto';
import { MAIL_STATUSES, type MailStatus } from '../mail.entities';
import type { MailRow } from '../mail.repository';
import { apiFields, apiObject, apiTimes } from '../../common/http/api-fields';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** GET /api/v1/admin/mail: limit and offset. */
export class ListMailQueryDto extends PageQueryDto {}

/** One message of the mail outbox (docs/mail.md, Admin API). */
export class MailMessageDto {
  @ApiProperty({ type: 'integer', example: 7 }) id: number;
  @ApiProperty({ enum: MAIL_KINDS, example: 'license_issued' }) kind: MailKind;
  @ApiProperty({ example: 'office@example.rs' }) to: string;
  @ApiProperty({
    enum: MAIL_STATUSES,
    example: 'sent',
    description:
      'pending: waiting to be sent or retried; sending: an attempt is under way; sent: accepted by the SMTP server (or written as .eml); failed: permanently refused or out of retries; suppressed: a reminder to an address that turned reminders off',
  })
  status: MailStatus;
  @ApiProperty({ type: 'integer', example: 1 }) attempts: number;
  @ApiProperty({ nullable: true, type: String, example: null }) last_error: string | null;
  @ApiProperty({ nullable: true, type: 'integer', example: 42, description: 'the licence it is about' }) license_id: number | null;
  @ApiProperty({ nullable: true, type: String, example: 'msg_2b1f0c...', description: 'the event it was made from' })
  event_id: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time', description: 'when pending: the next attempt' })
  next_attempt_at: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) sent_at: string | null;

  static from(row: MailRow): MailMessageDto {
    return apiObject(
      { id: Number(row.id) },
      apiFields(row, 'kind'),
      { to: row.toAddress },
      apiFields(row, 'status', 'attempts', 'lastError', 'licenseId', 'eventId'),
      { next_attempt_at: row.status === 'pending' ? iso(row.nextAttemptAt) : null },
      apiTimes(row, 'createdAt', 'sentAt'),
    );
  }
}
